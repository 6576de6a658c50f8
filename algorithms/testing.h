// Test helpers: reference results computed directly, and the standard sweep that simulates an
// algorithm over world sizes 1..33 and 64, awkward counts, roots, channels and chunks.
#pragma once

#include <string>
#include <vector>

#include "algorithms/schedule.h"

namespace tutti::algo::testing {

// Rank r's input element i: a 64-bit mix of (r, i), so that wrong sums cannot cancel out.
int64_t TestInput(int rank, uint64_t index);

// What every rank's output must hold (sum as the reduction, wrapping), sized BufferCount.
std::vector<std::vector<int64_t>> Reference(const CollArgs& args);

// Simulates `algorithm` for `args` (rank ignored) and checks: the simulation succeeds, every
// output element is written and equals the reference, all ranks of an all_reduce hold the very
// same expression (bitwise identity) for every element, and every rank that must depend on
// another (all of them for all-to-all style collectives and the barrier, the root for
// reduce/gather, everyone on the root for broadcast/scatter) has heard from it.
// Returns "" if all is well, else what went wrong.
// With Aliasing::kInPlace the call is simulated in place (simulator.h) and checked the same way.
std::string CheckOne(const std::string& algorithm, const CollArgs& args, Aliasing aliasing = Aliasing::kDistinct);
// The same checks for given schedules (schedules[r] for rank r).
std::string CheckSchedules(const CollArgs& args, const std::vector<Schedule>& schedules,
                           Aliasing aliasing = Aliasing::kDistinct);

struct SweepOptions {
  std::vector<int> nranks;          // default: 1..33 and 64
  bool big_counts = true;           // 1000 and 4099 (with fewer channel/chunk variants)
  std::vector<uint64_t> chunks{0, 3};
  std::vector<int> nchannels{1, 2};
  bool distinct = false;            // CollArgs::distinct
};

// Runs CheckOne over the cross product; returns the number of cases run. Failures are reported
// with ADD_FAILURE (at most 10 per sweep).
int Sweep(const std::string& algorithm, Collective c, const SweepOptions& o = {});

// The in-place sweep behind registry.h's InPlaceSafe(): n in 1..33 and 64; counts 0, 1, 2, 7,
// 13, n-1, n+1, 1000; roots 0, n/2, n-1 (rooted collectives); nchannels 1, 2; chunk 0, 3.
// Runs CheckOne(algorithm, ..., kInPlace) over all of it in that order and returns the first
// `max_failures` failures (stopping there); *cases (if given) counts the cases run.
std::vector<std::string> InPlaceSweep(const std::string& algorithm, Collective c, size_t max_failures = 10,
                                      int* cases = nullptr);

// Expression of rank r's output element i as a string, "((0 1) 2)" (leaves: ranks).
std::string OrderOf(const std::string& algorithm, const CollArgs& args, int rank, uint64_t index);

}  // namespace tutti::algo::testing
