// tutti_perf's command line: the nccl-tests flags plus --coll and --algo.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "bench/perf/perf_coll.h"
#include "core/base/status.h"
#include "core/base/dtype.h"

namespace tutti::perf {

struct PerfOptions {
  size_t min_bytes = size_t{32} << 20;  // -b
  size_t max_bytes = size_t{32} << 20;  // -e
  uint64_t step_factor = 1;             // -f (> 1: multiply)
  size_t step_bytes = size_t{1} << 20;  // -i (used when step_factor <= 1)
  int iters = 20;                       // -n
  int warmup_iters = 5;                 // -w
  bool check = true;                    // -c
  std::vector<DataType> types = {DataType::kFloat32};  // -d
  std::vector<RedOp> ops = {RedOp::kSum};              // -o
  int root = 0;                         // -r
  int average = 1;                      // -a: 0 rank 0, 1 average, 2 min, 3 max
  int blocking = 0;                     // -z: accepted; every call is blocking anyway
  double timeout_s = 0;                 // -T: 0 = the library's default
  Coll coll = Coll::kAllReduce;         // --coll
  std::string algo;                     // --algo ("" = automatic)
  bool barrier = false;                 // --barrier 1: a barrier before each timed call
  int debug_corrupt_rank = -1;          // --debug-corrupt-rank (hidden): spoil one result element
  bool help = false;                    // -h
};

// Parses argv[1..argc). InvalidArgument with a message meant for the user on a bad flag.
Result<PerfOptions> ParsePerfArgs(int argc, const char* const* argv);

// The -h text.
std::string PerfUsage(const char* prog);

// "8", "64K", "256M", "1G", "2T" (powers of 1024; an optional trailing B). false on garbage or
// overflow.
bool ParseBytes(const std::string& text, size_t* out);

// "rank 0", "average", "min", "max" for -a 0..3.
const char* AverageName(int average);

}  // namespace tutti::perf
