"""torch.distributed on backend "tutti" beside "gloo", in one run: all_reduce time per call at
sizes from 8 B to 4 MiB, and the step time of DistributedDataParallel training an MLP (several
gradient buckets). Backends alternate pass by pass; medians over the passes are printed.

    .venv/bin/python bench/torch/torch_bench.py --ranks 2 [--passes 5] [--iters 200] [--steps 20]
(needs tutti_torch installed: bash tools/setup.sh --torch)
"""

import argparse
import datetime
import os
import socket
import statistics
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP

BACKENDS = ["tutti", "gloo"]
SIZES = [8, 1024, 16 << 10, 256 << 10, 1 << 20, 4 << 20]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def time_all_reduce(group, nbytes, iters):
    t = torch.ones(max(nbytes // 4, 1))
    n = iters if nbytes <= (64 << 10) else max(iters // 10, 10)
    for _ in range(5):
        dist.all_reduce(t, group=group)
    dist.barrier(group=group)
    start = time.perf_counter()
    for _ in range(n):
        dist.all_reduce(t, group=group)
    return (time.perf_counter() - start) / n


def time_ddp(group, steps, rank):
    torch.manual_seed(0)
    model = torch.nn.Sequential(*[m for _ in range(4) for m in (torch.nn.Linear(512, 512), torch.nn.ReLU())])
    ddp = DDP(model, process_group=group, bucket_cap_mb=1)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    x, y = torch.randn(32, 512), torch.randn(32, 512)

    def step():
        opt.zero_grad()
        torch.nn.functional.mse_loss(ddp(x), y).backward()
        opt.step()

    for _ in range(3):
        step()
    dist.barrier(group=group)
    start = time.perf_counter()
    for _ in range(steps):
        step()
    return (time.perf_counter() - start) / steps


def worker(rank, world, port, args, out):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=datetime.timedelta(seconds=300))
    groups = {"gloo": dist.new_group(backend="gloo"), "tutti": dist.new_group(backend="tutti")}
    times = {}
    for _ in range(args.passes):
        for b in BACKENDS:
            for size in SIZES:
                times.setdefault(("all_reduce", size, b), []).append(time_all_reduce(groups[b], size, args.iters))
            times.setdefault(("ddp", 0, b), []).append(time_ddp(groups[b], args.steps, rank))
    if rank == 0:
        out.update({k: statistics.median(v) for k, v in times.items()})
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("--passes", type=int, default=5)
    p.add_argument("--iters", type=int, default=200)
    p.add_argument("--steps", type=int, default=20)
    args = p.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    with mp.Manager() as m:
        out = m.dict()
        mp.spawn(worker, args=(args.ranks, free_port(), args, out), nprocs=args.ranks, join=True)
        res = dict(out)
    print(f"# {args.ranks} ranks on {os.cpu_count()} cores, medians of {args.passes} passes, torch {torch.__version__}")
    print(f"{'call':<22}{'tutti us':>12}{'gloo us':>12}{'gloo/tutti':>12}")
    for size in SIZES:
        t, g = res[("all_reduce", size, "tutti")] * 1e6, res[("all_reduce", size, "gloo")] * 1e6
        print(f"{'all_reduce ' + str(size) + ' B':<22}{t:>12.1f}{g:>12.1f}{g / t:>12.2f}")
    t, g = res[("ddp", 0, "tutti")] * 1e6, res[("ddp", 0, "gloo")] * 1e6
    print(f"{'DDP step (MLP 1M)':<22}{t:>12.1f}{g:>12.1f}{g / t:>12.2f}")


if __name__ == "__main__":
    main()
