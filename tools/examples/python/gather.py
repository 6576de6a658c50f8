# The seed tutorial's gather example (4 ranks):
#   torchrun --nproc-per-node 4 tools/examples/python/gather.py
import torch
import torch.distributed as dist

dist.init_process_group("tutti")
rank = dist.get_rank()

input = torch.ones(1) * rank
# rank==0 => [0]
# rank==1 => [1]
# rank==2 => [2]
# rank==3 => [3]

if rank == 0:
    outputs_list = [torch.zeros(1), torch.zeros(1), torch.zeros(1), torch.zeros(1)]
    dist.gather(input, gather_list=outputs_list, dst=0)
    print(f"rank 0: {[t.tolist() for t in outputs_list]}")
else:
    dist.gather(input, dst=0)
dist.destroy_process_group()
