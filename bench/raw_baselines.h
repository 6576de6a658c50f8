// The baselines tutti's figures are compared with, measured by the same processes in the same
// repetitions as tutti's own figures (so machine noise hits both alike): plain memcpy, and a raw
// TCP loopback connection between the two ranks (8-byte ping-pong; a stream in which the receiver
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
// Bytes/s of `iters` messages of `bytes`, each acknowledged by the receiver.
Result<double> RawStream(int fd, size_t bytes, int iters, bool sender);

}  // namespace tutti::bench
