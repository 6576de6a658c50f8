# The seed tutorial's torch.multiprocessing.spawn example: four processes run fn(rank, ...).
#   python tools/examples/python/spawn_hello.py
import torch.multiprocessing as mp


def fn(rank, param1, param2):
    print(f"{param1} {param2} - rank: {rank}")


if __name__ == "__main__":
    mp.spawn(fn=fn, args=("A0", "B1"), nprocs=4, join=True, daemon=False, start_method="spawn")
