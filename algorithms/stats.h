// Counts taken from a schedule, for an alpha-beta-gamma cost model (the selector's input).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "algorithms/schedule.h"
#include "core/base/status.h"

namespace tutti::algo {

struct ScheduleStats {
  int streams = 0;
  int steps = 0;             // communication steps (steps with a transfer) of the longest stream
  int max_stream_steps = 0;  // all steps of the longest stream, local-only ones included
  uint64_t messages_sent = 0;
  uint64_t messages_received = 0;
  uint64_t bytes_sent = 0;
  uint64_t bytes_received = 0;
  uint64_t bytes_reduced = 0;  // elem_size x element-op applications (a k-source reduction of c
                               // elements counts (k-1) c)
  uint64_t bytes_copied = 0;   // local copies
  uint64_t scratch_bytes = 0;
};

// Stats of one rank's schedule.
ScheduleStats Stats(const Schedule& s, size_t elem_size);

// The largest value of every field over all ranks' schedules of `algorithm` (args.rank is
// ignored): the critical rank's cost for a model. Errors as BuildSchedule.
Result<ScheduleStats> AlgorithmStats(const std::string& algorithm, const CollArgs& args, size_t elem_size);

std::string ToString(const ScheduleStats& s);

}  // namespace tutti::algo
