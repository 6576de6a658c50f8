# The seed tutorial's process-group example on backend "tutti": mp.spawn starts 4 processes, each
# joins the default group (MASTER_ADDR / MASTER_PORT) and a new group of all ranks, and sums its
# rank over both.
#   python tools/examples/python/process_group.py
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def fn(rank, world_size):
    dist.init_process_group(backend="tutti", rank=rank, world_size=world_size)
    group = dist.new_group([_ for _ in range(world_size)])
    t = torch.tensor([float(rank)])
    dist.all_reduce(t, group=group)
    print(f"rank {rank}: sum of ranks in the new group = {t.item()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    os.environ.setdefault("MASTER_ADDR", "localhost")
    os.environ.setdefault("MASTER_PORT", "29500")
    os.environ["WORLD_SIZE"] = "4"
    mp.spawn(fn=fn, args=(4,), nprocs=4, join=True, daemon=False, start_method="spawn")
