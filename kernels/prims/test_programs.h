// Test support: hand-written lowered programs for the error paths of the host world and the
// device kernel (one op per step, one stream).
#pragma once

#include <cstdint>
#include <vector>

#include "algorithms/prim_program.h"
#include "algorithms/schedule.h"

namespace tutti::prims::testing {

inline algo::PrimProgram OneStream(const std::vector<algo::PrimOp>& steps) {
  algo::PrimProgram p;
  p.streams.push_back(algo::PrimStream{0, static_cast<uint32_t>(steps.size())});
  for (const algo::PrimOp& op : steps) {
    p.steps.push_back(algo::PrimStep{static_cast<uint32_t>(p.ops.size()), 1});
    p.ops.push_back(op);
  }
  return p;
}

// `count` elements of the input (from element 0) to `peer`.
inline algo::PrimOp SendOp(int peer, uint64_t count) {
  algo::PrimOp op;
  op.count = count;
  op.send_peer = peer;
  op.nsrcs = 1;
  op.srcs[0] = algo::PrimLoc{static_cast<uint8_t>(algo::Buf::kInput), 0};
  return op;
}

// `count` elements from `peer` into the output (from element 0).
inline algo::PrimOp RecvOp(int peer, uint64_t count) {
  algo::PrimOp op;
  op.count = count;
  op.recv_peer = peer;
  op.nsrcs = 1;
  op.srcs[0] = algo::PrimLoc{algo::kPrimRecv, 0};
  op.ndsts = 1;
  op.dsts[0] = algo::PrimLoc{static_cast<uint8_t>(algo::Buf::kOutput), 0};
  return op;
}

}  // namespace tutti::prims::testing
