// For tests of slot runs: two ranks' channels over one area in this process's memory, and their
// calls, driven by hand (each Advance as a waiter would).
#pragma once

#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "core/coll/slot_run.h"

namespace tutti::testing {

struct World {
  World() : shape{2, 8, 256, 2}, bytes(SlotChannel::AreaBytes(shape)) {
    mem = static_cast<char*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64));
    std::memset(mem, 0, bytes);
    SlotChannel::Format(mem, shape);
    for (int r = 0; r < 2; ++r) ch[r] = std::make_shared<SlotChannel>(mem, shape, r);
  }
  ~World() { std::free(mem); }
  // rank r's all_reduce (sum) of `in` into `out`, as call #1
  std::shared_ptr<SlotRun> AllReduce(int r, const std::vector<int32_t>& in, std::vector<int32_t>& out) {
    return Call(r, algo::Collective::kAllReduce, in, out);
  }
  // rank r's `coll` (sum, root 0) of int32 `in` into `out`, as call #1 (`in` holds a block per
  // rank where the collective takes one; direct: SlotCall::direct)
  std::shared_ptr<SlotRun> Call(int r, algo::Collective coll, const std::vector<int32_t>& in,
                                std::vector<int32_t>& out, bool direct = false) {
    SlotCall c;
    c.direct = direct;
    c.coll = coll;
    c.input = reinterpret_cast<const char*>(in.data());
    c.output = reinterpret_cast<char*>(out.data());
    c.count = slot_call::PerRankBlocks(coll) ? in.size() / 2 : in.size();
    c.type = DataType::kInt32;
    return std::make_shared<SlotRun>(ch[r], c, SlotChunk(c, 2, ch[r]->slot_bytes()), 1);
  }
  SlotChannel::Shape shape;
  size_t bytes;
  char* mem;
  std::shared_ptr<SlotChannel> ch[2];
};

}  // namespace tutti::testing
