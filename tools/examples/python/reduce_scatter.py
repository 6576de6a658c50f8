# The seed tutorial's reduce-scatter example (4 ranks):
#   torchrun --nproc-per-node 4 tools/examples/python/reduce_scatter.py
import torch
import torch.distributed as dist

dist.init_process_group("tutti")
rank = dist.get_rank()

input_list = torch.tensor([1, 10, 100, 1000]) * rank
input_list = torch.split(input_list, dim=0, split_size_or_sections=1)
# rank==0 => [0, 00, 000, 0000]
# rank==1 => [1, 10, 100, 1000]
# rank==2 => [2, 20, 200, 2000]
# rank==3 => [3, 30, 300, 3000]

output = torch.tensor([0])

dist.reduce_scatter(
    output=output,
    input_list=list(input_list),
    op=torch.distributed.ReduceOp.SUM,
)

print(f"rank {rank}: {output.tolist()}")
dist.destroy_process_group()
