# The seed tutorial's all-gather example (4 ranks):
#   torchrun --nproc-per-node 4 tools/examples/python/all_gather.py
import torch
import torch.distributed as dist

dist.init_process_group("tutti")
rank = dist.get_rank()

input = torch.ones(1) * rank
# rank==0 => [0]
# rank==1 => [1]
# rank==2 => [2]
# rank==3 => [3]

outputs_list = [torch.zeros(1), torch.zeros(1), torch.zeros(1), torch.zeros(1)]

dist.all_gather(tensor_list=outputs_list, tensor=input)
print(f"rank {rank}: {[t.tolist() for t in outputs_list]}")
dist.destroy_process_group()
