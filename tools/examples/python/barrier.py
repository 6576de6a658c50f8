# The seed tutorial's barrier example: rank 0 works for 3 seconds; nobody passes the barrier
# before it arrives.
#   torchrun --nproc-per-node 4 tools/examples/python/barrier.py
import time

import torch.distributed as dist

dist.init_process_group("tutti")
rank = dist.get_rank()

if rank == 0:
    seconds = 0
    while seconds <= 3:
        time.sleep(1)
        seconds += 1
        print(f"rank 0 - seconds: {seconds}")

print(f"rank {rank}: no-barrier at {time.time():.3f}")
dist.barrier()
print(f"rank {rank}: barrier at {time.time():.3f}")
dist.destroy_process_group()
