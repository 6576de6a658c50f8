// Lowered schedules: the form the fused device kernels (kernels/prims, and its host twin) run.
//
// A schedule step posts receives and sends, waits for all of them, then runs local operations
// one after the other. A lowered program says the same with primitive operations that stream a
// message piece by piece through a bounded FIFO (a few slots per connection):
//
//   value[i] = srcs[0][i] op srcs[1][i] op ...   (or srcs[0][i] alone when reduce == 0)
//   every dst[i] = value[i];   send value[i] to send_peer (when >= 0)
//
// where a source is a local region (input, output, scratch, at the op's count) or the data
// received from recv_peer. So the device primitives are all one op: send (local -> peer), recv
// (peer -> local), recv-reduce-copy (peer op local -> local), copy-send, recv-copy-send (through
// an early send, below), and a purely local copy or reduction. Ops of one step run concurrently,
// piece by piece: a step is done when all its ops are. Ops sending to (or receiving from) one
// peer in one stream use one connection in the order they are listed, step after step.
//
// Early sends: a pure send op (one local source, no destination) whose source is exactly what
// an op of the previous step writes may start during that previous step, each piece as soon as
// the producer wrote it (`after` names the producer, an index within the previous step). This is
// what turns "receive and reduce a block, then send it on" into a pipelined recv-reduce-send
// without changing what the schedule computes: the early send still belongs to its own step,
// and the previous step never waits for it.
//
// Plain data only (no pointers): copied as it is to a device.
#pragma once

#include <cstdint>
#include <vector>

namespace tutti::algo {

constexpr int kPrimMaxSrcs = 8;
constexpr int kPrimMaxDsts = 2;
constexpr int kPrimMaxOpsPerStep = 32;
// PrimLoc::buf naming the received data instead of a local buffer.
constexpr uint8_t kPrimRecv = 0xff;

struct PrimLoc {
  uint8_t buf = 0;      // algo::Buf value, or kPrimRecv
  uint64_t offset = 0;  // elements (unused for kPrimRecv)
};

struct PrimOp {
  uint64_t count = 0;     // elements; a message of 0 elements is still one (empty) piece
  int32_t recv_peer = -1; // -1: nothing received
  int32_t send_peer = -1; // -1: nothing sent
  int32_t after = -1;     // early send: the producing op's index within the previous step
  uint8_t reduce = 0;     // 1: combine srcs left to right in one pass; 0: copy srcs[0]
  uint8_t nsrcs = 0;
  uint8_t ndsts = 0;
  PrimLoc srcs[kPrimMaxSrcs];
  PrimLoc dsts[kPrimMaxDsts];
};

struct PrimStep {
  uint32_t first_op = 0;  // index into PrimProgram::ops
  uint32_t nops = 0;
};

struct PrimStream {
  uint32_t first_step = 0;  // index into PrimProgram::steps
  uint32_t nsteps = 0;
};

struct PrimProgram {
  std::vector<PrimStream> streams;
  std::vector<PrimStep> steps;
  std::vector<PrimOp> ops;
  uint64_t scratch_count = 0;  // elements, as Schedule::scratch_count
  // What the lowering fused: local ops folded into the receive they consume, and early sends.
  uint32_t fused_locals = 0;
  uint32_t early_sends = 0;
};

}  // namespace tutti::algo
