# The seed tutorial's reduce example on CPU tensors:
#   torchrun --nproc-per-node 4 tools/examples/python/reduce.py
import torch
import torch.distributed as dist

dist.init_process_group("tutti")
rank = dist.get_rank()

tensor = torch.ones(2, 2) * rank
# rank==0 => [[0, 0], [0, 0]]
# rank==1 => [[1, 1], [1, 1]]
# rank==2 => [[2, 2], [2, 2]]
# rank==3 => [[3, 3], [3, 3]]

dist.reduce(tensor, op=torch.distributed.ReduceOp.SUM, dst=0)

if rank == 0:
    print(f"rank 0: {tensor.tolist()}")
dist.destroy_process_group()
