// Static checks of one rank's schedule, without running it: what the simulator verifies before
// it simulates, and what an executor may run in debug builds.
#pragma once

#include "algorithms/schedule.h"
#include "core/base/status.h"

namespace tutti::algo {

// The most streams a schedule may have (the executor's limit).
constexpr size_t kMaxScheduleStreams = 1024;

// Checks, for rank a.rank:
//  - every peer is another rank in [0, nranks);
//  - every region lies inside its buffer (BufferCount; scratch: s.scratch_count);
//  - nothing writes kInput (receives, local destinations);
//  - local ops: a copy has one source, a reduction at least one; sources have the destination's
//    count; a source is either exactly the destination or does not overlap it;
//  - within a step, a received region overlaps no other transfer's region;
//  - no two streams touch overlapping regions where one of them writes (a data race: streams
//    run concurrently).
// InternalError naming the rank, stream, step and region otherwise.
// With Aliasing::kInPlace, input and output are one storage laid out as schedule.h describes:
// the overlap, partial-overlap and race checks compare storage elements (an input read in one
// stream races with an output write to the same storage in another), and a copy whose source
// and destination are the same storage is no write. Nothing may still write kInput.
Status CheckSchedule(const Schedule& s, const CollArgs& a, Aliasing aliasing = Aliasing::kDistinct);

std::string DescribeRegion(const Region& r);  // "output[3, +5)"

}  // namespace tutti::algo
