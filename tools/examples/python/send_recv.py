# The seed tutorial's send / recv example (2 ranks):
#   torchrun --nproc-per-node 2 tools/examples/python/send_recv.py
import torch
import torch.distributed as dist

dist.init_process_group("tutti")
torch.manual_seed(0)

if dist.get_rank() == 0:
    tensor = torch.randn(2, 2)
    dist.send(tensor, dst=1)
elif dist.get_rank() == 1:
    tensor = torch.zeros(2, 2)
    print(f"rank 1 before: {tensor.tolist()}")
    dist.recv(tensor, src=0)
    print(f"rank 1 after: {tensor.tolist()}")
else:
    raise RuntimeError("wrong rank")
dist.destroy_process_group()
