// One rank's part of a fused collective: its lowered program, its buffers, and its ends of the
// FIFO connections, which live in memory its peers reach too (the receiver's device memory,
// mapped into the sender through CUDA IPC, or ordinary memory on the host). Each rank runs its
// own program (the device kernel, kernels/cuda/prims_kernel.h, or host threads, host_rank.h);
// the ranks meet only through the connections.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "algorithms/prim_program.h"
#include "core/base/dtype.h"
#include "core/base/status.h"
#include "kernels/prims/fifo.h"

namespace tutti::prims {

struct RankRun {
  DataType type = DataType::kFloat32;
  RedOp op = RedOp::kSum;  // sum, prod, min, max and the bitwise ops (avg and premul_sum: sum)
  const algo::PrimProgram* program = nullptr;
  int rank = 0, nranks = 1;
  uint8_t* bufs[3] = {nullptr, nullptr, nullptr};  // input, output, scratch
  uint64_t buf_bytes[3] = {0, 0, 0};                // their sizes (regions are checked against them)
  // [stream * nranks + peer]: this rank -> peer, and peer -> this rank; at least
  // program->streams.size() * nranks entries each (entries for this rank itself unused).
  std::vector<ConnCtl*> send, recv;
  uint8_t* stage = nullptr;  // LL staging: geom.slot_bytes per stream, this rank's own
  FifoGeom geom;
  uint32_t tag = 0;  // the call's tag: the same on every rank of the call (fifo.h)
  double timeout_s = 60;  // a stream that cannot move for this long fails (kTimeout)
  // Called once everything of the run is allocated and staged, right before the program starts
  // (may be empty). Ranks that are threads sharing one GPU meet here: an allocation or a memset
  // by one rank while a peer's kernel already waits for it would keep its own kernel from
  // running beside the peer's (CUDA's implicit synchronisation), a deadlock.
  std::function<Status()> before_launch;
  // Asked now and then while the run waits (may be empty): true stops it, every stream failing
  // with kAborted (kErrCancelled): its communicator failed (a peer's mismatch, timeout or
  // abort), so the peers this run waits for will not come.
  std::function<bool()> cancelled;
};

// Checks a run before anything touches memory: a program well formed for a world of nranks
// (report.h's CheckWorld), every region inside its buffer, a type and op the kernels take, and
// connection tables with an entry for every peer the program sends to or receives from.
// InvalidArgument naming rank, stream and what is wrong.
Status CheckRankRun(const RankRun& run);

}  // namespace tutti::prims
