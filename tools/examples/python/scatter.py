# The seed tutorial's scatter example (4 ranks):
#   torchrun --nproc-per-node 4 tools/examples/python/scatter.py
import torch
import torch.distributed as dist

dist.init_process_group("tutti")
rank = dist.get_rank()

output = torch.zeros(1)
print(f"before rank {rank}: {output.tolist()}")

if rank == 0:
    inputs = torch.tensor([10.0, 20.0, 30.0, 40.0])
    inputs = torch.split(inputs, dim=0, split_size_or_sections=1)
    # (tensor([10]), tensor([20]), tensor([30]), tensor([40]))
    dist.scatter(output, scatter_list=list(inputs), src=0)
else:
    dist.scatter(output, src=0)

print(f"after rank {rank}: {output.tolist()}")
dist.destroy_process_group()
