// A collective call as the Communicator's collective files see it (internal to core/coll): the
// call's arguments, its buffers' shape, and small facts about collectives.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "algorithms/schedule.h"
#include "core/coll/executor.h"
#include "core/communicator.h"

namespace tutti {

struct Communicator::CollCall {
  algo::Collective coll;
  const void* send;
  void* recv;
  uint64_t count;
  DataType type;
  RedOp op;
  int root;
  const CollOptions* opts;
};

// What PrepareRun made of a call: the buffers the schedule runs on, the local work before and
// after it, scratch, host mirrors (staged device path), the engine for local work.
struct Communicator::PreparedRun {
  CollBuffers bufs;
  CollLocalWork extra;  // private input copy, premul scaling, avg division; keeps temporaries
  std::shared_ptr<char> scratch;
  CollStaging staging;
  std::shared_ptr<exec::LocalEngine> local;
  RedOp local_op = RedOp::kSum;
};

struct Communicator::CallShape {
  size_t elem = 0;
  uint64_t in_count = 0, out_count = 0;  // elements of the send and receive buffers
  bool is_root = false;
  bool need_in = false, need_out = false;  // buffers this rank must provide
  int device = -1;                         // where they live: -1 host memory, else a CUDA device
};

namespace coll_call {

using algo::Collective;

inline bool Rooted(Collective c) {
  return c == Collective::kBroadcast || c == Collective::kReduce || c == Collective::kScatter || c == Collective::kGather;
}
inline bool Reduces(Collective c) {
  return c == Collective::kReduce || c == Collective::kAllReduce || c == Collective::kReduceScatter;
}
// Collectives that only move whole blocks to their places (no reduction, no pipelined forwarding
// as broadcast's): their receives are copies that one-sided reads serve in one copy.
inline bool MovesBlocks(Collective c) {
  return c == Collective::kAllGather || c == Collective::kGather || c == Collective::kScatter ||
         c == Collective::kAllToAll;
}

// Elements of (input, output) for `rank`, per the table in algorithms/schedule.h.
inline std::pair<uint64_t, uint64_t> BufferCounts(Collective c, uint64_t n, uint64_t count) {
  switch (c) {
    case Collective::kBroadcast: return {count, count};
    case Collective::kReduce: return {count, count};
    case Collective::kScatter: return {n * count, count};
    case Collective::kGather: return {count, n * count};
    case Collective::kAllReduce: return {count, count};
    case Collective::kAllGather: return {count, n * count};
    case Collective::kReduceScatter: return {n * count, count};
    case Collective::kAllToAll: return {n * count, n * count};
    case Collective::kBarrier: return {0, 0};
  }
  return {0, 0};
}

// nccl-tests' size of a call: the bytes of the larger buffer.
inline uint64_t CallBytes(Collective c, uint64_t n, uint64_t count, size_t elem) {
  auto [in, out] = BufferCounts(c, n, count);
  return std::max(in, out) * elem;
}

inline bool Overlap(const void* a, uint64_t abytes, const void* b, uint64_t bbytes) {
  auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return abytes > 0 && bbytes > 0 && x < y + bbytes && y < x + abytes;
}

// "rank 3: all_reduce", built only for messages: nothing is formatted on the path of a call
// that succeeds.
inline std::string Who(int rank, Collective coll) {
  return "rank " + std::to_string(rank) + ": " + algo::CollectiveName(coll);
}

}  // namespace coll_call
}  // namespace tutti
