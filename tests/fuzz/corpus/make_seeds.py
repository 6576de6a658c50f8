#!/usr/bin/env python3
"""Writes the seed corpus of every fuzz target in tests/fuzz (one folder per target).

The seeds are small valid inputs in each target's input layout (see the comment at the top of
each <target>.cc), plus a few malformed ones. Run from anywhere: python3 make_seeds.py
Inputs that once crashed a target are kept beside them as crash_* files (not written here).
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def u8(v): return struct.pack("<B", v & 0xFF)
def u16(v): return struct.pack("<H", v & 0xFFFF)
def u32(v): return struct.pack("<I", v & 0xFFFFFFFF)
def u64(v): return struct.pack("<Q", v & 0xFFFFFFFFFFFFFFFF)
def s(b): return u32(len(b)) + b  # a store string: u32 length + bytes


# --- store wire (core/store/store_wire.h) ---
def store_frame(typ, rid, body):
    return b"TSTR" + u16(typ) + u16(0) + u64(rid) + u32(len(body)) + body


HELLO, SET, GET, ADD, WAIT, CHECK, DELETE = 1, 2, 3, 4, 5, 6, 7
HELLO_OK, OK, VALUE, INT, BOOL, ERROR = 0x81, 0x82, 0x83, 0x84, 0x85, 0x86


def on(conn, frame):  # a raw frame from connection conn (store_server_fuzz record)
    return u8(conn << 4) + frame


def tick(ms): return u8(5) + u16(ms)
def drop(conn): return u8((conn << 4) | 4)


store_server = {
    "set_get": on(0, store_frame(SET, 1, s(b"a") + s(b"1"))) + on(1, store_frame(GET, 2, u64(1000) + s(b"a"))),
    "get_waits_then_set": on(1, store_frame(GET, 7, u64(1000) + s(b"k"))) + on(0, store_frame(SET, 1, s(b"k") + s(b"v"))),
    "wait_times_out": on(2, store_frame(WAIT, 3, u64(500) + u32(2) + s(b"k") + s(b"j"))) + tick(400) + tick(200),
    "add_check_delete": on(0, store_frame(ADD, 1, s(b"n") + u64(5))) + on(0, store_frame(ADD, 2, s(b"n") + u64(-2)))
    + on(1, store_frame(CHECK, 3, u32(2) + s(b"n") + s(b"x"))) + on(1, store_frame(DELETE, 4, s(b"n"))),
    "hello_and_zero_timeout": on(0, store_frame(HELLO, 1, u32(1) + s(b"secret"))) + on(0, store_frame(GET, 2, u64(0) + s(b"z"))),
    "drop_waiter": on(3, store_frame(WAIT, 9, u64(2**64 - 1) + u32(1) + s(b"q"))) + drop(3) + on(0, store_frame(SET, 1, s(b"q") + s(b""))),
    "built": bytes([6, 3, 1, 1, ord("a"), 0, 0, 0, 10, 0, 2, 1, 1, 2, 1, 3, 0, 0, 0, 255]) + bytes([7, 4, 2, 1, ord("b"), 1, 1, ord("b"), 1, ord("x"), 3, 0]),
    "bad_magic": on(0, b"XSTR" + store_frame(SET, 1, b"")[4:]),
}

store_client = {
    "hello_ok": u8(0) + store_frame(HELLO_OK, 1, u32(1)),
    "ok_value": u8(0) + store_frame(OK, 2, b"") + u8(0) + store_frame(VALUE, 3, s(b"value")),
    "int_bool": u8(0) + store_frame(INT, 4, u64(-7)) + u8(0) + store_frame(BOOL, 5, u8(1)),
    "error": u8(0) + store_frame(ERROR, 6, u32(3) + s(b"timed out waiting for store key \"k\"")),
    "built": u8(0xB5) + u8(5) + u64(9) + u32(1) + u64(42) + u8(1) + u8(3) + b"abc" + u8(3) + u8(5) + b"hello",
    "bad_bool": u8(0) + store_frame(BOOL, 7, u8(2)),
    "request_type": u8(0) + store_frame(SET, 8, s(b"k") + s(b"v")),
}

# --- frames (transport/frame.h; the types are the protocol's, core/p2p/frame_types.h) ---
DATA, RTS, CTS, BULK, ACK, NACK, CLOSE, DONE, PING, POST, CREDIT = range(1, 12)
FRAME_BULK = 1  # the flags byte: BULK frames carry it


def frame_header(typ, tag=0, sig=0, fid=0, arg=0, plen=0, magic=0x54555454):
    flags = FRAME_BULK if typ == BULK else 0
    return u32(magic) + u8(typ) + u8(flags) + b"\0\0" + u32(tag) + u32(sig) + u64(fid) + u64(arg) + u64(plen)


frame_header_seeds = {
    "data": u64(65536) + frame_header(DATA, 7, 0, 1, 8, 8),
    "control": u64(65536) + frame_header(ACK, fid=1) + frame_header(NACK, fid=2, arg=16) + frame_header(DONE, fid=3, arg=8),
    "rts_cts_close": u64(4096) + frame_header(RTS, 1, 5, 9, 1 << 20, 24) + frame_header(CTS, fid=9, plen=0) + frame_header(CLOSE, plen=12),
    "bulk_over_limit": u64(16) + frame_header(BULK, fid=4, arg=0, plen=17),
    "bad": u64(2**63) + frame_header(12) + frame_header(DATA, magic=0),
    "post_credit": u64(65536) + frame_header(POST, -3, 77, 2, 16, 16) + frame_header(CREDIT, arg=4096) + frame_header(PING),
}


def ring_frame(typ, payload, fid=1, arg=None):
    h = frame_header(typ, fid=fid, arg=len(payload) if arg is None else arg, plen=len(payload))
    pad = (-len(payload)) % 8
    return h + payload + b"\0" * pad


def hostile_ring(mode, frames, head_extra=0, fill_to=128):
    data = b"".join(frames)
    head = len(data) + head_extra
    body = data + b"\0" * (fill_to - len(data))
    # tail U64 (0), Bool small, Bool head = tail + U16, U16 head, fill, Bool no corrupt capacity,
    # Bool ring limit, then one Bool per consumed frame (0: copy the payload).
    return u8(mode) + u64(0) + u8(1) + u8(1) + u16(head) + body + u8(0) + u8(1) + b"\0" * 8


shm_ring = {
    "hostile_data_ack": hostile_ring(0, [ring_frame(DATA, b"12345678"), ring_frame(ACK, b"")]),
    "hostile_close": hostile_ring(0, [ring_frame(CLOSE, b"rank 1 failed", arg=0)]),
    "hostile_short": hostile_ring(0, [ring_frame(DATA, b"x" * 16)], head_extra=-8),
    "hostile_wrapped": u8(0) + u64(100) + u8(1) + u8(1) + u16(48) + (ring_frame(DATA, b"abcd")[28:] + b"\0" * 76 + ring_frame(DATA, b"abcd")[:28] + b"\0" * 0).ljust(128, b"\0") + u8(0) + u8(1) + b"\0" * 4,
    # round trip: op odd = write (type from op, bulk flag from bit 4, no payload if bit 5), tag,
    # sig, id, len U16, fill byte, arg; even = read.
    "roundtrip": u8(1) + u8(1) + u32(7) + u32(0) + u64(1) + u16(5) + u8(0x61) + u64(5) + u8(4) + u8(0)
    + u8(9) + u32(0) + u32(0) + u64(2) + u16(0) + u8(0) + u64(0) + u8(2 * 3),
    "roundtrip_full": u8(3) + (u8(7) + u32(1) + u32(2) + u64(3) + u16(100) + u8(0x62) + u64(0)) * 6 + u8(14) + u8(14),
}

tcp_stream = {
    "two_frames": u16(4095) + u8(0) + u8(255) + frame_header(DATA, fid=1, arg=5, plen=5) + b"hello" + frame_header(ACK, fid=1),
    "discard": u16(4095) + u8(1) + u8(255) + frame_header(BULK, fid=2, arg=0, plen=6) + b"abcdef" + frame_header(CLOSE, plen=3) + b"bye",
    "partial": u16(4095) + u8(0) + u8(255) + frame_header(DATA, fid=1, arg=9, plen=9) + b"abc",
    "refuse_second": u16(4095) + u8(0) + u8(1) + frame_header(ACK, fid=1) + frame_header(ACK, fid=2),
    "bad_header": u16(15) + u8(0) + u8(255) + frame_header(DATA, fid=1, arg=32, plen=32) + b"x" * 32,
}


# --- TCP hello (transport/tcp/tcp_bootstrap.h) ---
def hello(comm, frm, to, idx, nsocks, secret, magic=0x54544348, version=2):
    return u32(magic) + u32(version) + u64(comm) + u32(frm) + u32(to) + u32(idx) + u32(nsocks) + u32(len(secret)) + u32(0) + secret


def acceptor(rank, nsocks, secret, peers, taken):
    return u8(1) + u8(rank) + u8(nsocks - 1) + u8(len(secret)) + secret + u8(peers) + u8(taken)


tcp_hello = {
    "good": acceptor(0, 2, b"s3cret", 0b1110, 0) + hello(7, 1, 0, 1, 2, b"s3cret"),
    "wrong_secret": acceptor(0, 1, b"abc", 0b10, 0) + hello(7, 1, 0, 0, 1, b"abd"),
    "taken": acceptor(2, 2, b"", 0b11, 0b1) + hello(7, 0, 2, 1, 2, b""),
    "bad_magic": acceptor(1, 1, b"k", 0b1, 0) + hello(7, 0, 1, 0, 1, b"k", magic=0),
    "long_secret": acceptor(0, 1, b"", 0b10, 0) + hello(7, 1, 0, 0, 1, b"")[:32] + u32(4096) + u32(0),
}

peer_card = {
    "card": b"1234\n/tutti-bell-1234-0\nhost1/6c1f/net:[4026531840]",
    "no_doorbell": b"99\n\nh",
    "big_pid": b"99999999999\n\nh",
    "bad_pid": b"12a\nx\ny",
    "one_line": b"1234",
}

host_port = {
    "v4": b"10.0.0.1:29500",
    "v6": b"[::1]:80",
    "port0": b"host:0",
    "colons": b"a:b:c:65535",
    "empty": b":1",
}

slurm_nodelist = {
    "ranges": b"node[01-04,07],gpu5",
    "product": b"r[1-2]n[1-2]",
    "plain": b"a,b,c",
    "open": b"n[1-",
    "backwards": b"n[3-1]",
    "wide": b"x[000-010],y[9-11]",
}

slurm_tasks = {
    "single": u32(0) + b"4",
    "repeat": u32(1) + b"4(x2),3",
    "list": u32(2) + b"2,3,5",
    "past_end": u32(9) + b"8(x3)",
    "bad": u32(0) + b"4(x0)",
}


def env(*pairs):
    return b"".join(u8(i) + v + b"\0" for i, v in pairs)


launch_env = {
    "torchrun": env((0, b"1"), (1, b"4"), (2, b"1"), (3, b"2"), (15, b"h0"), (16, b"29500")),
    "mpirun": env((4, b"3"), (5, b"8"), (6, b"1"), (7, b"2"), (15, b"10.0.0.1")),
    "srun": env((8, b"5"), (9, b"8"), (10, b"1"), (11, b"4(x2)"), (13, b"1"), (14, b"node[01-02]")),
    "single": env((17, b"secret")),
    "half": env((0, b"1")),
    "bad_local": env((0, b"0"), (1, b"2"), (3, b"1")),
}

launcher_args = {
    "n": b"-n\x004\x00prog",
    "nodes": b"--nnodes=2\0--node-rank\0001\0--master-addr\00010.0.0.1\0--secret\0S\0--\0prog\0arg",
    "torchrun_spelling": b"--nproc_per_node=2\0--master_port\00029500\0--timeout\00090s\0--no-prefix\0prog",
    "help": b"-h",
    "bad": b"--nnodes\0x\0prog",
    "timeout_nan": b"--timeout\0nan\0prog",
}

env_values = {
    "seconds": b"30s",
    "ms": b"250ms",
    "hex": b"0x10",
    "bool": b"true",
    "negative": b"-5",
    "minutes": b"2m",
    "nan": b"nan",
    "inf": b"inf",
}

algo_spec = {
    "global": u8(3) + u32(1 << 20) + u8(0) + b"\0" + b"ring",
    "per_coll": u8(7) + u32(4096) + u8(4) + b"tree\0" + b"allreduce:tree,allgather:bruck",
    "mixed": u8(15) + u32(8) + u8(0) + b"binomial\0" + b"rhd,broadcast:ring,barrier:dissemination",
    "unknown": u8(1) + u32(1) + u8(0) + b"\0" + b"allreduce:bruck",
    "two_globals": u8(1) + u32(1) + u8(0) + b"\0" + b"ring,tree",
}

cost_model = {
    "shm": u8(0) + b"1.5,10,8\0" + u16(15) + u16(900) + u16(700),
    "tcp": u8(1) + b"20,2.5,8\0" + u16(200) + u16(150) + u16(700),
    "bad": u8(0) + b"1,0,8\0",
    "garbage": u8(1) + b"fast\0",
    "nan": u8(0) + b"nan,1,1\0",
}


def iface(name, loopback=False):
    return u8(len(name) | (0x80 if loopback else 0)) + name


socket_ifname = {
    "prefix": u8(3) + iface(b"eth0") + iface(b"lo", True) + iface(b"ib0") + b"eth,ib",
    "exclude": u8(3) + iface(b"eth0") + iface(b"dock0") + iface(b"lo", True) + b"^dock",
    "exact": u8(2) + iface(b"eth0") + iface(b"eth01") + b"=eth0",
    "exclude_exact": u8(2) + iface(b"eth0") + iface(b"eth1") + b"^=eth1",
    "empty": u8(2) + iface(b"lo", True) + iface(b"eth0"),
}

TARGETS = {
    "store_server_fuzz": store_server,
    "store_client_fuzz": store_client,
    "frame_header_fuzz": frame_header_seeds,
    "shm_ring_fuzz": shm_ring,
    "tcp_stream_fuzz": tcp_stream,
    "tcp_hello_fuzz": tcp_hello,
    "peer_card_fuzz": peer_card,
    "host_port_fuzz": host_port,
    "slurm_nodelist_fuzz": slurm_nodelist,
    "slurm_tasks_fuzz": slurm_tasks,
    "launch_env_fuzz": launch_env,
    "launcher_args_fuzz": launcher_args,
    "env_values_fuzz": env_values,
    "algo_spec_fuzz": algo_spec,
    "cost_model_fuzz": cost_model,
    "socket_ifname_fuzz": socket_ifname,
}

if __name__ == "__main__":
    for target, seeds in TARGETS.items():
        d = os.path.join(HERE, target)
        os.makedirs(d, exist_ok=True)
        for name, data in seeds.items():
            with open(os.path.join(d, "seed_" + name), "wb") as f:
                f.write(data)
    print("wrote", sum(len(v) for v in TARGETS.values()), "seeds for", len(TARGETS), "targets")
