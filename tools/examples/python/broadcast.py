# The seed tutorial's broadcast example on CPU tensors:
#   torchrun --nproc-per-node 4 tools/examples/python/broadcast.py
import torch
import torch.distributed as dist

dist.init_process_group("tutti")
rank = dist.get_rank()
torch.manual_seed(0)

if rank == 0:
    tensor = torch.randn(2, 2)
else:
    tensor = torch.zeros(2, 2)

dist.broadcast(tensor, src=0)
print(f"rank {rank}: {tensor.tolist()}")
dist.destroy_process_group()
