# The seed tutorial's all-reduce example on CPU tensors:
#   torchrun --nproc-per-node 4 tools/examples/python/all_reduce.py
import torch
import torch.distributed as dist

dist.init_process_group("tutti")
rank = dist.get_rank()

tensor = torch.ones(2, 2) * rank
# rank==0 => [[0, 0], [0, 0]]
# rank==1 => [[1, 1], [1, 1]]
# rank==2 => [[2, 2], [2, 2]]
# rank==3 => [[3, 3], [3, 3]]

dist.all_reduce(tensor, op=torch.distributed.ReduceOp.SUM)

print(f"rank {rank}: {tensor.tolist()}")
dist.destroy_process_group()
