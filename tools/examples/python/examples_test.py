"""Runs the seed tutorial's programs (tools/examples/python) on backend "tutti" the way a user
does, under torchrun or as `python prog.py` for the mp.spawn ones, and checks what they print.

    examples_test.py PACKAGE_DIR EXAMPLES_DIR
PACKAGE_DIR holds tutti_torch as installed (tools/torch/install.sh); EXAMPLES_DIR the programs.
"""

import glob
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import unittest

import torch

PKG, EXAMPLES = sys.argv[1], sys.argv[2]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(prog, nproc=None):
    env = dict(os.environ)
    env["PYTHONPATH"] = PKG + os.pathsep + env.get("PYTHONPATH", "")
    env["MASTER_ADDR"] = "127.0.0.1"
    env["MASTER_PORT"] = str(free_port())
    env.setdefault("OMP_NUM_THREADS", "1")
    path = os.path.join(EXAMPLES, prog)
    logs = tempfile.mkdtemp(prefix="tutti-examples-")
    if nproc is None:
        cmd = [sys.executable, path]
    else:
        # Each rank's output in its own file (ranks writing one pipe interleave their lines).
        cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", str(nproc),
               "--master-addr", "127.0.0.1", "--master-port", env["MASTER_PORT"],
               "--log-dir", logs, "--redirects", "3", path]
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=240)
        text, err = p.stdout, p.stderr
        for f in sorted(glob.glob(os.path.join(logs, "**", "std*.log"), recursive=True)):
            with open(f) as fh:
                if f.endswith("stdout.log"):
                    text += "\n" + fh.read()
                else:
                    err += f"\n{f}:\n" + fh.read()
    finally:
        shutil.rmtree(logs, ignore_errors=True)
    if p.returncode != 0:
        raise AssertionError(f"{prog} exited with {p.returncode}:\n{text[-4000:]}\n{err[-6000:]}")
    return [line for line in text.splitlines() if line.strip()]


def seeded_randn():
    torch.manual_seed(0)
    return torch.randn(2, 2).tolist()


class Examples(unittest.TestCase):
    def assertLines(self, got, want):
        self.assertEqual(sorted(got), sorted(want))

    def test_spawn_hello(self):
        self.assertLines(run("spawn_hello.py"), [f"A0 B1 - rank: {r}" for r in range(4)])

    def test_process_group(self):
        self.assertLines(run("process_group.py"), [f"rank {r}: sum of ranks in the new group = 6.0" for r in range(4)])

    def test_send_recv(self):
        self.assertLines(run("send_recv.py", 2),
                         ["rank 1 before: [[0.0, 0.0], [0.0, 0.0]]", f"rank 1 after: {seeded_randn()}"])

    def test_broadcast(self):
        self.assertLines(run("broadcast.py", 4), [f"rank {r}: {seeded_randn()}" for r in range(4)])

    def test_reduce(self):
        self.assertLines(run("reduce.py", 4), ["rank 0: [[6.0, 6.0], [6.0, 6.0]]"])

    def test_scatter(self):
        want = [f"before rank {r}: [0.0]" for r in range(4)] + [f"after rank {r}: [{10.0 * (r + 1)}]" for r in range(4)]
        self.assertLines(run("scatter.py", 4), want)

    def test_gather(self):
        self.assertLines(run("gather.py", 4), ["rank 0: [[0.0], [1.0], [2.0], [3.0]]"])

    def test_all_reduce(self):
        self.assertLines(run("all_reduce.py", 4), [f"rank {r}: [[6.0, 6.0], [6.0, 6.0]]" for r in range(4)])

    def test_all_gather(self):
        self.assertLines(run("all_gather.py", 4), [f"rank {r}: [[0.0], [1.0], [2.0], [3.0]]" for r in range(4)])

    def test_reduce_scatter(self):
        self.assertLines(run("reduce_scatter.py", 4), [f"rank {r}: [{6 * 10 ** r}]" for r in range(4)])

    def test_barrier(self):
        lines = run("barrier.py", 4)
        self.assertEqual([l for l in lines if l.startswith("rank 0 - seconds")],
                         [f"rank 0 - seconds: {s}" for s in range(1, 5)])
        arrived = {int(m[1]): float(m[2]) for l in lines if (m := re.match(r"rank (\d): no-barrier at ([\d.]+)", l))}
        passed = {int(m[1]): float(m[2]) for l in lines if (m := re.match(r"rank (\d): barrier at ([\d.]+)", l))}
        self.assertEqual(sorted(arrived), [0, 1, 2, 3])
        self.assertEqual(sorted(passed), [0, 1, 2, 3])
        for r in range(4):  # nobody passed before rank 0 (4 s late) arrived
            self.assertGreaterEqual(passed[r], arrived[0])
            if r:
                self.assertGreater(arrived[0] - arrived[r], 3.0)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
