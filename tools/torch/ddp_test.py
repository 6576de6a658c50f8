"""DistributedDataParallel on backend "tutti": a small model trained for some steps with gradient
buckets all-reduced by tutti ends with the parameters the same training gets with gloo (float
tolerance: the two sum in different orders), and bit-identical on every rank. 2 and 3 ranks.
"""

import datetime
import os
import socket
import sys
import unittest

sys.path.insert(0, sys.argv[1])

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402

STEPS = 8


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64), torch.nn.ReLU(),
                               torch.nn.Linear(64, 10))


def train(ddp, rank):
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
    for step in range(STEPS):
        g = torch.Generator().manual_seed(1000 * step + rank)
        x, y = torch.randn(16, 32, generator=g), torch.randn(16, 10, generator=g)
        opt.zero_grad()
        torch.nn.functional.mse_loss(ddp(x), y).backward()
        opt.step()
    return torch.cat([p.detach().reshape(-1) for p in ddp.module.parameters()])


def worker(rank, world, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=datetime.timedelta(seconds=120))
    tutti = dist.new_group(backend="tutti")
    # Buckets of ~4 KB: the model's ~7k parameters go in several all-reduces per step.
    with_tutti = DDP(model(), process_group=tutti, bucket_cap_mb=0.004)
    with_gloo = DDP(model(), bucket_cap_mb=0.004)
    # The same through a Python communication hook (all-reduce, then divide in the future's then).
    hooked = DDP(model(), process_group=tutti, bucket_cap_mb=0.004)
    state = {"calls": 0}

    def counting_hook(state, bucket):
        state["calls"] += 1
        return default_hooks.allreduce_hook(tutti, bucket)

    hooked.register_comm_hook(state, counting_hook)
    p_tutti = train(with_tutti, rank)
    p_gloo = train(with_gloo, rank)
    p_hooked = train(hooked, rank)
    buckets = state["calls"] / STEPS
    assert buckets >= 1.5, f"expected several buckets per step, got {buckets}"
    assert torch.allclose(p_tutti, p_gloo, rtol=1e-4, atol=1e-5), (p_tutti - p_gloo).abs().max()
    assert torch.allclose(p_hooked, p_gloo, rtol=1e-4, atol=1e-5), (p_hooked - p_gloo).abs().max()
    # identical on every rank, bit for bit (compared over gloo)
    every = [torch.empty_like(p_tutti) for _ in range(world)]
    dist.all_gather(every, p_tutti)
    for r in range(world):
        assert torch.equal(every[r], p_tutti), f"rank {r}'s parameters differ from rank {rank}'s"
    if rank == 0:
        print(f"{world} ranks: {STEPS} steps, {buckets:.1f} buckets per step, largest difference from gloo "
              f"{(p_tutti - p_gloo).abs().max().item():.3g}")
    dist.destroy_process_group()


class DDPTest(unittest.TestCase):
    def test_2_ranks(self):
        mp.spawn(worker, args=(2, free_port()), nprocs=2, join=True)

    def test_3_ranks(self):
        mp.spawn(worker, args=(3, free_port()), nprocs=3, join=True)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
