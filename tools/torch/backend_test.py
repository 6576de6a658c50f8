"""Every torch.distributed call on backend "tutti", checked against values computed locally, at 2
and 3 ranks (mp.spawn), and its errors: a mismatched call, a timeout, a dead rank, unsupported
types. Run by //tools/torch:backend_test (py_test.sh gives the package directory first).
"""

import datetime
import os
import socket
import subprocess
import sys
import tempfile
import time
import traceback
import unittest

PKG = sys.argv[1]
sys.path.insert(0, PKG)

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

import tutti_torch  # noqa: E402,F401  (registered already by the entry point; explicit is harmless)

R = dist.ReduceOp
INT_TYPES = [torch.int8, torch.uint8, torch.int32, torch.int64]
FLOAT_TYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def value(rank, n, dtype, salt=0):
    """Rank's input: small values every type holds, distinct per rank and element."""
    base = torch.arange(n, dtype=torch.int64) + salt
    v = (base * 7 + rank * 3) % 11 + 1
    return v.to(dtype)


def reduce_local(op, inputs):
    acc = inputs[0].clone()
    for x in inputs[1:]:
        if op == R.SUM or op == R.AVG:
            acc = acc + x
        elif op == R.PRODUCT:
            acc = acc * x
        elif op == R.MIN:
            acc = torch.minimum(acc, x)
        elif op == R.MAX:
            acc = torch.maximum(acc, x)
        elif op == R.BAND:
            acc = acc & x
        elif op == R.BOR:
            acc = acc | x
        elif op == R.BXOR:
            acc = acc ^ x
    if op == R.AVG:
        acc = acc / len(inputs) if acc.is_floating_point() else torch.div(acc, len(inputs), rounding_mode="trunc")
    return acc.to(inputs[0].dtype)


def close(a, b, dtype):
    if dtype in (torch.float16, torch.bfloat16):
        return torch.allclose(a.double(), b.double(), rtol=1e-2, atol=1e-2)
    if dtype.is_floating_point or dtype.is_complex:
        return torch.allclose(a, b, rtol=1e-6, atol=1e-6)
    return torch.equal(a, b)


def run_ranks(fn, world, *args, timeout_s=60):
    port = free_port()
    mp.spawn(worker, args=(world, port, timeout_s, fn, args), nprocs=world, join=True)


def worker(rank, world, port, timeout_s, fn, args):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("tutti", rank=rank, world_size=world, timeout=datetime.timedelta(seconds=timeout_s))
    try:
        fn(rank, world, *args)
    except Exception:
        traceback.print_exc()
        raise
    finally:
        dist.destroy_process_group()


# ---- the calls ----

def all_calls(rank, n):
    # all_reduce: every type and op, sync and async, counts 0, 1, 1000
    for dtype in INT_TYPES + FLOAT_TYPES:
        ops = [R.SUM, R.PRODUCT, R.MIN, R.MAX, R.AVG] + ([R.BAND, R.BOR, R.BXOR] if dtype in INT_TYPES else [])
        for op in ops:
            for count in (0, 1, 1000):
                t = value(rank, count, dtype)
                want = reduce_local(op, [value(r, count, dtype) for r in range(n)])
                if op == R.PRODUCT:  # keep products in range: ones except a few elements
                    t = torch.ones(count, dtype=dtype)
                    if count:
                        t[0] = 2
                    want = torch.ones(count, dtype=dtype)
                    if count:
                        want[0] = 2 ** n
                if count % 2:
                    w = dist.all_reduce(t, op=op, async_op=True)
                    w.wait()
                else:
                    dist.all_reduce(t, op=op)
                assert close(t, want, dtype), f"all_reduce {dtype} {op} {count}: {t[:8]} != {want[:8]}"

    # premul_sum: each rank's input times the factor, summed
    t = value(rank, 64, torch.float32)
    dist.all_reduce(t, op=dist._make_nccl_premul_sum(0.5))
    assert close(t, sum(value(r, 64, torch.float32) for r in range(n)) * 0.5, torch.float32)

    # bool, complex, non-contiguous
    b = torch.tensor([rank == 0, True, False, rank == 1])
    dist.all_reduce(b, op=R.SUM)  # any
    assert b.tolist() == [True, True, False, n > 1], b
    b = torch.tensor([rank == 0, True])
    dist.all_reduce(b, op=R.MIN)  # all
    assert b.tolist() == [n == 1, True], b
    c = torch.complex(value(rank, 16, torch.float32), value(rank, 16, torch.float32, 1))
    dist.all_reduce(c)
    want = sum(torch.complex(value(r, 16, torch.float32), value(r, 16, torch.float32, 1)) for r in range(n))
    assert torch.allclose(c, want), c
    m = torch.arange(12, dtype=torch.float64).reshape(3, 4).t() * (rank + 1)  # a transposed view
    dist.all_reduce(m)
    assert torch.equal(m, torch.arange(12, dtype=torch.float64).reshape(3, 4).t() * (n * (n + 1) // 2)), m

    # broadcast from every root, any dtype (int16 and bool move as bytes)
    for root in range(n):
        for dtype in (torch.float32, torch.int16, torch.bool, torch.int64):
            t = value(root, 33, torch.int64).to(dtype) if rank == root else torch.zeros(33, dtype=dtype)
            dist.broadcast(t, src=root)
            assert torch.equal(t, value(root, 33, torch.int64).to(dtype)), (root, dtype, t)

    # reduce to every root
    for root in range(n):
        t = value(rank, 100, torch.float32)
        dist.reduce(t, dst=root, op=R.MAX)
        if rank == root:
            assert torch.equal(t, reduce_local(R.MAX, [value(r, 100, torch.float32) for r in range(n)]))

    # all_gather (list), all_gather_into_tensor, all_gather_object
    out = [torch.empty(5, 3) for _ in range(n)]
    dist.all_gather(out, value(rank, 15, torch.float32).reshape(5, 3))
    for r in range(n):
        assert torch.equal(out[r], value(r, 15, torch.float32).reshape(5, 3))
    flat = torch.empty(n * 7, dtype=torch.int32)
    dist.all_gather_into_tensor(flat, value(rank, 7, torch.int32))
    assert torch.equal(flat, torch.cat([value(r, 7, torch.int32) for r in range(n)]))
    objs = [None] * n
    dist.all_gather_object(objs, {"rank": rank, "name": f"r{rank}"})
    assert objs == [{"rank": r, "name": f"r{r}"} for r in range(n)], objs

    # gather / scatter at every root
    for root in range(n):
        glist = [torch.empty(4) for _ in range(n)] if rank == root else None
        dist.gather(value(rank, 4, torch.float32), gather_list=glist, dst=root)
        if rank == root:
            assert all(torch.equal(glist[r], value(r, 4, torch.float32)) for r in range(n))
        out = torch.empty(6, dtype=torch.int64)
        slist = [value(r, 6, torch.int64, salt=root) for r in range(n)] if rank == root else None
        dist.scatter(out, scatter_list=slist, src=root)
        assert torch.equal(out, value(rank, 6, torch.int64, salt=root)), out

    # reduce_scatter (list) and reduce_scatter_tensor
    out = torch.empty(9)
    dist.reduce_scatter(out, [value(rank, 9, torch.float32, salt=r) for r in range(n)])
    assert torch.equal(out, sum(value(r, 9, torch.float32, salt=rank) for r in range(n))), out
    inp = torch.cat([value(rank, 5, torch.int64, salt=r) for r in range(n)])
    out = torch.empty(5, dtype=torch.int64)
    dist.reduce_scatter_tensor(out, inp, op=R.MIN)
    assert torch.equal(out, reduce_local(R.MIN, [value(r, 5, torch.int64, salt=rank) for r in range(n)]))

    # all_to_all_single: even, and uneven splits (zeros included) over rows of 3
    inp = torch.arange(n * 4, dtype=torch.float32) + 100 * rank
    out = torch.empty(n * 4)
    dist.all_to_all_single(out, inp)
    assert torch.equal(out, torch.cat([torch.arange(4, dtype=torch.float32) + 4 * rank + 100 * r for r in range(n)]))
    send_rows = [(rank + d) % 3 for d in range(n)]  # rows this rank sends to each rank d
    recv_rows = [(s + rank) % 3 for s in range(n)]  # what rank s sends to this rank
    inp = torch.cat([torch.full((send_rows[d], 3), float(rank * 10 + d)) for d in range(n)])
    out = torch.empty(sum(recv_rows), 3)
    dist.all_to_all_single(out, inp, output_split_sizes=recv_rows, input_split_sizes=send_rows)
    want = torch.cat([torch.full((recv_rows[s], 3), float(s * 10 + rank)) for s in range(n)])
    assert torch.equal(out, want), (out, want)

    # all_to_all with tensors of different sizes
    inputs = [torch.full((d + 1,), rank * 10 + d, dtype=torch.int32) for d in range(n)]
    outputs = [torch.empty(rank + 1, dtype=torch.int32) for _ in range(n)]
    dist.all_to_all(outputs, inputs)
    for s in range(n):
        assert torch.equal(outputs[s], torch.full((rank + 1,), s * 10 + rank, dtype=torch.int32)), outputs

    # send / recv, isend / irecv, batch_isend_irecv (a ring both ways)
    nxt, prv = (rank + 1) % n, (rank - 1) % n
    if n > 1:
        if rank == 0:
            dist.send(value(0, 10, torch.float64), dst=1, tag=5)
        elif rank == 1:
            t = torch.empty(10, dtype=torch.float64)
            dist.recv(t, src=0, tag=5)
            assert torch.equal(t, value(0, 10, torch.float64))
        got = torch.empty(3)
        reqs = [dist.isend(torch.full((3,), float(rank)), dst=nxt), dist.irecv(got, src=prv)]
        for q in reqs:
            q.wait()
        assert torch.equal(got, torch.full((3,), float(prv)))
        a, b = torch.empty(2), torch.empty(2)
        ops = [dist.P2POp(dist.isend, torch.full((2,), rank + 0.5), nxt),
               dist.P2POp(dist.isend, torch.full((2,), rank + 0.25), prv),
               dist.P2POp(dist.irecv, a, prv), dist.P2POp(dist.irecv, b, nxt)]
        for q in dist.batch_isend_irecv(ops):
            q.wait()
        if n > 2:
            assert torch.equal(a, torch.full((2,), prv + 0.5)) and torch.equal(b, torch.full((2,), nxt + 0.25)), (a, b)

    # recv from any source: every other rank sends once; dist.recv returns the sender
    if n > 1:
        if rank == 0:
            seen = set()
            for _ in range(n - 1):
                t = torch.empty(4, dtype=torch.int64)
                src = dist.recv(t, tag=11)
                assert torch.equal(t, torch.full((4,), src * 3, dtype=torch.int64)), (src, t)
                seen.add(src)
            assert seen == set(range(1, n)), seen
        else:
            dist.send(torch.full((4,), rank * 3, dtype=torch.int64), dst=0, tag=11)

    # futures: then() runs after the call, with its result
    t = torch.full((4,), float(rank))
    fut = dist.all_reduce(t, async_op=True).get_future()
    doubled = fut.then(lambda f: f.value()[0] * 2).wait()
    assert torch.equal(doubled, torch.full((4,), float(n * (n - 1)))), doubled
    works = [dist.all_reduce(torch.ones(8) * i, async_op=True) for i in range(5)]
    futs = torch.futures.collect_all([w.get_future() for w in works]).wait()
    assert len(futs) == 5
    # futures complete when their calls do: a receive that matches late does not hold back the
    # future of an all_reduce issued after it
    late_in = torch.zeros(4)
    if rank == 0:
        late = dist.irecv(late_in, src=1, tag=21).get_future()
        t = torch.ones(4)
        dist.all_reduce(t, async_op=True).get_future().wait()
        assert torch.equal(t, torch.full((4,), float(n))), t
        assert not late.done(), late.value() if late.done() else None
        dist.send(torch.zeros(1), dst=1, tag=22)
        late.wait()
        assert torch.equal(late_in, torch.full((4,), 21.0)), late_in
    else:
        dist.all_reduce(torch.ones(4))
        if rank == 1:
            dist.recv(torch.zeros(1), src=0, tag=22)
            dist.send(torch.full((4,), 21.0), dst=0, tag=21)

    # coalesced all_reduce (one call over several tensors)
    ts = [torch.ones(3) * rank, torch.ones(2, 2) * (rank + 1)]
    with dist._coalescing_manager(async_ops=True) as cm:
        for x in ts:
            dist.all_reduce(x)
    cm.wait()
    assert torch.equal(ts[0], torch.ones(3) * (n * (n - 1) // 2)) and torch.equal(ts[1], torch.ones(2, 2) * (n * (n + 1) // 2))

    # sub-groups: every rank but the last, and a group of one
    if n > 2:
        g = dist.new_group(list(range(n - 1)))
        if rank < n - 1:
            t = torch.ones(1)
            dist.all_reduce(t, group=g)
            assert t.item() == n - 1
    solo = [dist.new_group([r]) for r in range(n)]
    t = torch.ones(2) * rank
    dist.all_reduce(t, group=solo[rank])
    assert torch.equal(t, torch.ones(2) * rank)

    dist.barrier()
    # a work dropped before it ends keeps its buffers until it does (nothing to check but no crash)
    for _ in range(20):
        dist.all_reduce(torch.ones(1000), async_op=True)
    dist.barrier()


def unsupported(rank, n):
    def expect(fn, words):
        try:
            fn()
        except Exception as e:  # noqa: BLE001
            assert all(w in str(e) for w in words), f"{words} not in: {e}"
            return
        raise AssertionError(f"no error, expected one with {words}")

    expect(lambda: dist.all_reduce(torch.ones(4, dtype=torch.int16)), ["tutti", "Short", "cannot be reduced"])
    expect(lambda: dist.all_reduce(torch.ones(4, dtype=torch.complex64), op=R.MAX), ["complex", "MAX"])
    expect(lambda: dist.all_to_all_single(torch.empty(4), torch.empty(4), [1] * (n + 1), [1] * (n + 1)),
           ["split sizes"])
    dist.barrier()  # still usable after refused calls


def mismatch(rank, n):
    t = torch.ones(4 if rank == 0 else 5)
    try:
        dist.all_reduce(t)
    except dist.DistBackendError as e:
        msg = str(e)
        assert "tutti" in msg and ("mismatch" in msg.lower() or "count" in msg), msg
        return
    raise AssertionError("a mismatched all_reduce succeeded")


def timeout(rank, n):
    if rank == 0:
        try:
            dist.all_reduce(torch.ones(4))
        except dist.DistBackendError as e:
            assert "tutti" in str(e) and "timed out" in str(e), str(e)
            return
        raise AssertionError("an all_reduce with a missing rank succeeded")
    time.sleep(6)  # the other ranks do not call it (and stay in the group past rank 0's timeout)


def dead_rank(rank, n):
    if rank == n - 1:
        os._exit(0)  # dies without a word
    try:
        dist.all_reduce(torch.ones(1 << 16))
    except dist.DistBackendError as e:
        assert f"rank {n - 1}" in str(e), str(e)
        os._exit(0)  # the group is unusable now; leave without destroy
    raise AssertionError("an all_reduce with a dead rank succeeded")


# A program whose rank 1 reaches new_group 1.5 s after rank 0: its stderr is checked.
LATE_RANK = r"""
import os, sys, time
sys.path.insert(0, sys.argv[1])
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import tutti_torch


def run(rank, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("tutti", rank=rank, world_size=2)
    if rank == 1:
        time.sleep(1.5)
    g = dist.new_group([0, 1])
    t = torch.ones(2)
    dist.all_reduce(t, group=g)
    assert t[0].item() == 2, t
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(run, args=(int(sys.argv[2]),), nprocs=2)
"""


class Backend(unittest.TestCase):
    def test_late_rank_logs_nothing(self):
        # tutti waits for a late rank in short slices; torch's store must not log each one.
        with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
            f.write(LATE_RANK)
        try:
            r = subprocess.run([sys.executable, f.name, PKG, str(free_port())], capture_output=True, text=True,
                               timeout=120)
        finally:
            os.unlink(f.name)
        self.assertEqual(r.returncode, 0, r.stderr[-3000:])
        self.assertNotIn("waitForInput", r.stderr, r.stderr[-3000:])

    def test_all_calls_2_ranks(self):
        run_ranks(all_calls, 2)

    def test_all_calls_3_ranks(self):
        run_ranks(all_calls, 3)

    def test_unsupported(self):
        run_ranks(unsupported, 2)

    def test_mismatch(self):
        run_ranks(mismatch, 2)

    def test_timeout(self):
        run_ranks(timeout, 2, timeout_s=3)

    def test_dead_rank(self):
        port = free_port()
        ctx = mp.start_processes(worker, args=(3, port, 60, dead_rank, ()), nprocs=3, join=False, start_method="spawn")
        while not ctx.join():
            pass


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
