// Errors of a run of lowered programs, as the host world and the device kernel report them: the
// failed stream's rank, stream and step, the peer, and what it was waiting for.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "algorithms/prim_program.h"
#include "core/base/status.h"
#include "kernels/prims/fifo.h"
#include "kernels/prims/stream_exec.h"

namespace tutti::prims {

// Checks what a run is given before anything touches memory: one program per rank and one set of
// buffers, a FIFO geometry the protocols can use (>= 1 slot, slot bytes a multiple of 16), and
// programs that are well formed (indices in range, peers of the world, 1 to kPrimMaxSrcs
// sources, at most kPrimMaxDsts destinations and kPrimMaxOpsPerStep ops a step, buffers that
// exist, early sends after an op of the previous step). InvalidArgument naming rank and op.
Status CheckWorld(const std::vector<algo::PrimProgram>& programs, size_t nbuffers, const FifoGeom& geom);

// Every local region the programs read or write lies inside its buffer: sizes[r][b] is rank r's
// buffer b (input, output, scratch) in bytes, or UINT64_MAX where unknown (not checked).
// InvalidArgument naming rank, stream, step, op and buffer otherwise.
Status CheckRegions(const std::vector<algo::PrimProgram>& programs, const std::vector<std::array<uint64_t, 3>>& sizes,
                    uint32_t elem_size);

// "receive from rank 1 (piece 0 of 3), send to rank 2 (piece 1 of 3)": the unfinished ops of
// the stream's current step (`per`: elements per piece).
std::string Waiting(const algo::PrimProgram& program, uint32_t stream, const StreamState& st, uint64_t per);

// The status for a stream whose state holds an error (kMismatch for a piece of the wrong size
// or of another call, kTimeout with what it waited for, kAborted when another stream failed
// first or the run was cancelled).
Status StreamFailure(const algo::PrimProgram& program, int rank, uint32_t stream, const StreamState& st,
                     uint64_t per, double timeout_s);

// The first real failure among all streams' states (one that is not kAborted or kCancelled,
// else a cancelled one, else an aborted one), OK when none failed. states[i] belongs to (ranks[i], streams[i]) of programs[ranks[i]].
template <class StateAt>
Status FirstFailure(size_t nstates, StateAt at, uint64_t per, double timeout_s) {
  for (int pass = 0; pass < 3; ++pass) {
    for (size_t i = 0; i < nstates; ++i) {
      const algo::PrimProgram* program;
      int rank;
      uint32_t stream;
      const StreamState* st = at(i, &program, &rank, &stream);
      if (st->error == kErrNone) continue;
      if (pass == 0 && (st->error == kErrAborted || st->error == kErrCancelled)) continue;
      if (pass == 1 && st->error == kErrAborted) continue;
      return StreamFailure(*program, rank, stream, *st, per, timeout_s);
    }
  }
  return OkStatus();
}

}  // namespace tutti::prims
