// The baselines tutti's figures are compared with, measured by the same processes in the same
// repetitions as tutti's own figures (so machine noise hits both alike): plain memcpy, a spin
// ping-pong through shared memory, and a raw TCP loopback connection between the two ranks (8-byte ping-pong; a stream in which the receiver
// acknowledges each message with one byte, the same completion rule as tutti's send).
#pragma once

#include <cstddef>

#include "core/base/status.h"

namespace tutti::bench {

// Bytes/s of `iters` memcpys of `bytes` between two buffers (allocated and touched first).
double MemcpyBandwidth(size_t bytes, int iters);

// A connected loopback TCP socket pair across two processes: the listener side calls
// RawListen and sends the port to the other, which calls RawConnect; then RawAccept.
Result<int> RawListen(int* port);
Result<int> RawAccept(int listen_fd);
Result<int> RawConnect(int port);

// One-way seconds of an 8-byte ping-pong (`initiator` sends first).
Result<double> RawPingPong(int fd, int iters, bool initiator);

// The floor of a shared-memory ping-pong: two processes spinning on cache lines of a page they
// both map (MAP_SHARED before the fork), each writing 8 bytes and a sequence number into the
// other's line and spinning until its own line shows the next number; no library, no protocol.
struct SpinLines;
SpinLines* MapSpinLines();  // before the ranks are forked; never unmapped (a few bytes)
// One-way seconds of `iters` round trips; both ranks call it with the same iters, each process
// with one SpinLines (the sequence numbers it expects are counted per process). Gives up
// (returns an error) when the peer has not answered for `timeout_s`.
Result<double> SpinPingPong(SpinLines* lines, int iters, bool initiator, double timeout_s = 60);
// Bytes/s of `iters` messages of `bytes`, each acknowledged by the receiver.
Result<double> RawStream(int fd, size_t bytes, int iters, bool sender);

}  // namespace tutti::bench
