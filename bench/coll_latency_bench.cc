// Latency of small collectives and what a call costs beyond moving data (Google Benchmark):
//   BM_SlotRound       one round through the slot protocol between two threads (publish, see
//                      the other's slot, finish): the floor of a slot collective on this machine
//   BM_CallOneRank     a 1-rank communicator's all_reduce: the per-call path of the message
//                      executor (checks, plan lookup, buffers, run, Work) with nothing to send
//   BM_AllReduceSlots  a whole 2-rank all_reduce through the slots, the ranks being two threads
//   BM_AllReduceMsgs   the same as messages (algorithm ring over the shm transport)
//   BM_SlotCallCpu     the CPU cost of a slot call on its own: both ranks of a 2-rank
//                      communicator driven by one thread, a rooted call's sender first (it waits
//                      for no one), then its receiver (whose data is there); per iteration one
//                      call of each rank, so half the time is one call, with no waiting and no
//                      line moving between cores
// Run: bazel run -c opt //bench:coll_latency_bench (times per iteration; the 2-thread cases need
// two free cores to mean anything).
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "core/coll/slot_channel.h"
#include "core/communicator.h"
#include "core/store/in_memory_store.h"

namespace tutti {
namespace {

void BM_SlotRound(benchmark::State& state) {
  const uint64_t bytes = static_cast<uint64_t>(state.range(0));
  const SlotChannel::Shape shape{2, 8, (bytes + 63) / 64 * 64, 1};  // one unit per round
  const uint64_t area_bytes = SlotChannel::AreaBytes(shape);
  char* area = static_cast<char*>(std::aligned_alloc(64, (area_bytes + 63) / 64 * 64));
  std::memset(area, 0, area_bytes);
  SlotChannel::Format(area, shape);
  std::vector<char> in(bytes, 1), out0(bytes), out1(bytes);
  // One round: wait until the slot may be written, write and publish, wait for the peer, read, finish.
  auto round = [&](SlotChannel& ch, uint32_t s, char* out) {
    std::lock_guard<std::mutex> lock(ch.mu());
    while (!ch.Writable(s)) {
    }
    std::memcpy(ch.MySlot(s, bytes), in.data(), bytes);
    ch.Publish(ch.Place(s, bytes), SlotDesc{});
    const int peer = 1 - ch.rank();
    while (!ch.Arrived(peer, s)) {
    }
    std::memcpy(out, ch.PeerSlot(peer, s, bytes), bytes);
    ch.Finish(s);
  };
  const int64_t total = static_cast<int64_t>(state.max_iterations);  // the partner runs as many
  std::thread partner([&] {
    SlotChannel ch(area, shape, 1);
    for (uint32_t s = 1; s <= static_cast<uint32_t>(total); ++s) round(ch, s, out1.data());
  });
  SlotChannel ch(area, shape, 0);
  uint32_t s = 0;
  for (auto _ : state) round(ch, ++s, out0.data());
  partner.join();
  std::free(area);
}
BENCHMARK(BM_SlotRound)->Arg(8)->Arg(1024)->Arg(16384)->Iterations(200000);

void BM_CallOneRank(benchmark::State& state) {
  auto comm = Communicator::Create(std::make_shared<InMemoryStore>(), 0, 1);
  if (!comm.ok()) {
    state.SkipWithError(comm.status().ToString().c_str());
    return;
  }
  float x = 1, y = 0;
  for (auto _ : state) {
    Status st = (*comm)->AllReduce(&x, &y, 1, DataType::kFloat32, RedOp::kSum);
    if (!st.ok()) state.SkipWithError(st.ToString().c_str());
    benchmark::DoNotOptimize(y);
  }
}
BENCHMARK(BM_CallOneRank);

// Two ranks as two threads; each iteration of rank 0 is one all_reduce, and rank 1 makes as many
// calls (the iteration counts are fixed, so both know it in advance).
void AllReducePair(benchmark::State& state, const char* algorithm) {
  const size_t count = static_cast<size_t>(state.range(0));
  auto store = std::make_shared<InMemoryStore>();
  CommOptions o;
  o.transport = "shm";
  const int64_t total = static_cast<int64_t>(state.max_iterations);  // the peer makes as many calls
  std::thread peer([&] {
    auto c = Communicator::Create(store, 1, 2, o);
    if (!c.ok()) return;
    std::vector<float> in(count, 1), out(count);
    CollOptions co;
    co.algorithm = algorithm;
    for (int64_t i = 0; i < total; ++i)
      if (!(*c)->AllReduce(in.data(), out.data(), count, DataType::kFloat32, RedOp::kSum, co).ok()) return;
  });
  auto comm = Communicator::Create(store, 0, 2, o);
  if (!comm.ok()) {
    peer.join();
    state.SkipWithError(comm.status().ToString().c_str());
    return;
  }
  std::vector<float> in(count, 1), out(count);
  CollOptions co;
  co.algorithm = algorithm;
  for (auto _ : state) {
    Status st = (*comm)->AllReduce(in.data(), out.data(), count, DataType::kFloat32, RedOp::kSum, co);
    if (!st.ok()) {
      state.SkipWithError(st.ToString().c_str());
      break;
    }
  }
  peer.join();
}
void BM_AllReduceSlots(benchmark::State& state) { AllReducePair(state, "slots"); }
void BM_AllReduceMsgs(benchmark::State& state) { AllReducePair(state, "ring"); }
BENCHMARK(BM_AllReduceSlots)->Arg(2)->Arg(256)->Arg(4096)->Iterations(50000);
BENCHMARK(BM_AllReduceMsgs)->Arg(2)->Arg(256)->Arg(4096)->Iterations(5000);

// The two communicators of a 2-rank world over shm (made by two threads, as init needs both).
std::vector<std::unique_ptr<Communicator>> PairOnOneThread() {
  auto store = std::make_shared<InMemoryStore>();
  CommOptions o;
  o.transport = "shm";
  Result<std::unique_ptr<Communicator>> c1 = InvalidUsage("not made");
  std::thread peer([&] { c1 = Communicator::Create(store, 1, 2, o); });
  auto c0 = Communicator::Create(store, 0, 2, o);
  peer.join();
  std::vector<std::unique_ptr<Communicator>> comms;
  if (c0.ok() && c1.ok()) {
    comms.push_back(std::move(*c0));
    comms.push_back(std::move(*c1));
  }
  return comms;
}

// Arg: 0 broadcast (root 0, then rank 1), 1 reduce (rank 1, then root 0); 8 bytes.
void BM_SlotCallCpu(benchmark::State& state) {
  auto comms = PairOnOneThread();
  if (comms.size() != 2) {
    state.SkipWithError("could not make the communicators");
    return;
  }
  const bool reduce = state.range(0) == 1;
  float in[2] = {1, 2}, out[2] = {0, 0};
  for (auto _ : state) {
    Status a, b;
    if (reduce) {
      a = comms[1]->Reduce(in, out, 2, DataType::kFloat32, RedOp::kSum, 0);
      b = comms[0]->Reduce(in, out, 2, DataType::kFloat32, RedOp::kSum, 0);
    } else {
      a = comms[0]->Broadcast(in, out, 2, DataType::kFloat32, 0);
      b = comms[1]->Broadcast(in, out, 2, DataType::kFloat32, 0);
    }
    if (!a.ok() || !b.ok()) {
      state.SkipWithError((a.ok() ? b : a).ToString().c_str());
      break;
    }
    benchmark::DoNotOptimize(out);
  }
  state.SetLabel(reduce ? "reduce, 2 calls" : "broadcast, 2 calls");
}
BENCHMARK(BM_SlotCallCpu)->Arg(0)->Arg(1);

}  // namespace
}  // namespace tutti
