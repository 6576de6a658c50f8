// One rank's lowered program run by host threads (a thread per schedule stream, standing in for
// a thread block), over connections in memory its peers' threads reach: the host twin of the
// device's rank kernel, which is how a communicator's fused path is tested without a GPU.
#pragma once

#include "core/base/status.h"
#include "kernels/prims/rank_run.h"

namespace tutti::prims {

// Checks the run (the program, its regions against the buffers' sizes, the tables), runs every
// stream to its end and waits. Errors name the rank, stream, step and peer: a piece of the wrong
// size (kMismatch), a stream that could not move for run.timeout_s (kTimeout).
Status RunHostRank(const RankRun& run);

}  // namespace tutti::prims
