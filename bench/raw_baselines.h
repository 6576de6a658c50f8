// The baselines tutti's figures are compared with: plain memcpy, and a raw TCP loopback
// connection between this process and a forked child (ping-pong and a stream in which the
// receiver acknowledges each message with one byte, the same completion rule as tutti's send).
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "core/status.h"

namespace tutti::bench {

// Median bytes/s of memcpy between two buffers of `bytes`.
double MemcpyBandwidth(size_t bytes, int iters, int reps);

struct RawTcpFigures {
  double latency = 0;             // one-way seconds, 8-byte ping-pong
  std::vector<double> bandwidth;  // bytes/s per requested size
};
Result<RawTcpFigures> RawTcpBaseline(int lat_iters, const std::vector<std::pair<size_t, int>>& sizes, int reps);

}  // namespace tutti::bench
