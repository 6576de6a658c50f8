// The device primitives on the host: n ranks' lowered programs run in one process, connections
// in ordinary memory (standing in for mapped device memory), each (rank, stream) as a thread
// (standing in for a thread block) or under a deterministic round-robin scheduler. This is how
// the protocol, the primitives and the lowering are tested on machines without a GPU, and the
// reference the GPU run is compared with.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "algorithms/prim_program.h"
#include "core/base/dtype.h"
#include "core/base/status.h"
#include "kernels/prims/fifo.h"

namespace tutti::prims {

struct HostRankBuffers {
  void* input = nullptr;
  void* output = nullptr;
  void* scratch = nullptr;  // program.scratch_count elements
  // Their sizes in bytes: when any is non-zero, RunHostWorld refuses programs that reach outside
  // them (InvalidArgument), and runners that copy the buffers elsewhere use them; all 0: unknown,
  // the programs are trusted.
  size_t input_bytes = 0, output_bytes = 0, scratch_bytes = 0;
};

struct HostWorldOptions {
  FifoGeom geom;
  // Where every connection's counters start (LL flags derive from them: near 2^32 tests the
  // flag wrap-around).
  uint64_t counter_base = 0;
  // kRoundRobin: one thread polls every stream in turn, so a lack of progress anywhere is a
  // deadlock, reported at once. kThreads: a thread per (rank, stream).
  enum class Mode { kRoundRobin, kThreads } mode = Mode::kRoundRobin;
  // kThreads: called by a stream's thread after each poll that moved (a slow peer: sleep).
  std::function<void(int rank, int stream)> after_move;
  double timeout_s = 60;  // kThreads: a stream that cannot move for this long fails
  // kThreads: threads per stream, cooperating as a thread block's do (host_team.h).
  int team_size = 1;
  // The host of each rank (empty: all on one). A connection between ranks on different hosts is
  // two copies of its memory joined by a FifoProxy on each side (proxy.h), over a socketpair per
  // pair of hosts, polled by the scheduler (kRoundRobin) or a thread per proxy (kThreads).
  std::vector<int> hosts;
  // The call tag of each rank (empty: 0 on all): ranks whose tags differ fail (kMismatch).
  std::vector<uint32_t> tags;
};

// Runs programs[r] as rank r with buffers[r]; reductions with `op` on `type`. Errors name the
// rank, stream, step and peer: a piece of the wrong size, a deadlock (kRoundRobin), a timeout;
// or the proxy and its link.
Status RunHostWorld(DataType type, RedOp op, const std::vector<algo::PrimProgram>& programs,
                    const std::vector<HostRankBuffers>& buffers, const HostWorldOptions& options);

}  // namespace tutti::prims
