// The lowering pass: a rank's Schedule -> the PrimProgram the fused kernels run (prim_program.h).
//
// Unfused, every schedule step becomes one step of pure receives (peer -> region) and pure
// sends (region -> peer), and every local op a step of its own after it, which is the schedule's
// meaning word for word. Two fusions then remove waits without changing a single result bit:
//  - a local op that consumes exactly a region the previous step received (the ring's "reduce
//    the received block into my block") runs inside that step, piece by piece as the data
//    arrives, reading the FIFO slot instead of the region (recv-reduce-copy); the region is
//    still written when something later reads it (liveness within the stream);
//  - a send of exactly what the previous step's op wrote becomes an early send (recv-reduce-send,
//    recv-copy-send), provided it is the first send to that peer in its step.
// Each fusion is taken only where the moved work neither reads what the step's other ops write
// nor writes what they read or write.
#pragma once

#include <string>

#include "algorithms/prim_program.h"
#include "algorithms/schedule.h"
#include "core/base/status.h"

namespace tutti::algo {

struct LowerOptions {
  bool fuse_locals = true;
  bool early_sends = true;
};

// InvalidArgument when a step has more than kPrimMaxOpsPerStep transfers or a local op more
// than kPrimMaxSrcs sources (the message names the stream and step).
Result<PrimProgram> LowerSchedule(const Schedule& schedule, const LowerOptions& options = {});

// One line per op ("s0 step 2: recv<-1 (input+4 op recv) -> output+4, send->2 after 0"), for
// messages and tests.
std::string DescribeProgram(const PrimProgram& program);

}  // namespace tutti::algo
