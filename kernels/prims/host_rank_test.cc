// Each rank's program run by its own RunHostRank on its own thread, the ranks meeting only
// through shared connections (as a communicator's ranks do), checked bit for bit against the
// schedule simulator; several calls over the same connections; errors.
#include "kernels/prims/host_rank.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "algorithms/lowering.h"
#include "algorithms/registry.h"
#include "kernels/prims/world_check.h"

namespace tutti::prims {
namespace {

// Connections for n ranks and `nstreams` streams (s, from, to), zeroed, and LL staging per rank.
struct Conns {
  Conns(int n, uint32_t nstreams, const FifoGeom& g) : n(n), nstreams(nstreams), stride((ConnBytes(g) + 63) / 64 * 64) {
    mem.reset(static_cast<uint8_t*>(std::aligned_alloc(64, stride * nstreams * n * n)));
    std::memset(mem.get(), 0, stride * nstreams * n * n);
    stage.reset(static_cast<uint8_t*>(std::aligned_alloc(64, static_cast<size_t>(g.slot_bytes) * nstreams * n)));
  }
  ConnCtl* At(uint32_t s, int from, int to) const {
    return reinterpret_cast<ConnCtl*>(mem.get() + ((s * n + from) * n + to) * stride);
  }
  RankRun For(int r, const FifoGeom& g) const {
    RankRun run;
    run.rank = r;
    run.nranks = n;
    run.geom = g;
    run.stage = stage.get() + static_cast<size_t>(g.slot_bytes) * nstreams * r;
    for (uint32_t s = 0; s < nstreams; ++s) {
      for (int q = 0; q < n; ++q) {
        run.send.push_back(q == r ? nullptr : At(s, r, q));
        run.recv.push_back(q == r ? nullptr : At(s, q, r));
      }
    }
    return run;
  }
  struct Free {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  int n;
  uint32_t nstreams;
  size_t stride;
  std::unique_ptr<uint8_t, Free> mem, stage;
};

// RunWorldCheck's runner: every rank on its own thread, `calls` times over the same connections.
WorldCheck RankCheck(const char* algorithm, algo::Collective coll, int n, uint64_t count, FifoGeom g, int calls = 1) {
  WorldCheck c;
  c.algorithm = algorithm;
  c.args.coll = coll;
  c.args.nranks = n;
  c.args.count = count;
  c.args.nchannels = 2;
  c.world.geom = g;
  c.run = [calls](DataType type, RedOp op, const std::vector<algo::PrimProgram>& programs,
                  const std::vector<HostRankBuffers>& bufs, const HostWorldOptions& o) -> Status {
    const int n = static_cast<int>(programs.size());
    uint32_t nstreams = 1;
    for (const auto& p : programs) nstreams = std::max(nstreams, static_cast<uint32_t>(p.streams.size()));
    Conns conns(n, nstreams, o.geom);
    for (int k = 0; k < calls; ++k) {
      std::vector<Status> st(n);
      std::vector<std::thread> ranks;
      for (int r = 0; r < n; ++r) {
        ranks.emplace_back([&, r] {
          RankRun run = conns.For(r, o.geom);
          run.type = type;
          run.op = op;
          run.program = &programs[r];
          run.bufs[0] = static_cast<uint8_t*>(bufs[r].input);
          run.bufs[1] = static_cast<uint8_t*>(bufs[r].output);
          run.bufs[2] = static_cast<uint8_t*>(bufs[r].scratch);
          run.buf_bytes[0] = bufs[r].input_bytes;
          run.buf_bytes[1] = bufs[r].output_bytes;
          run.buf_bytes[2] = bufs[r].scratch_bytes;
          run.timeout_s = 20;
          st[r] = RunHostRank(run);
        });
      }
      for (auto& t : ranks) t.join();
      for (const Status& s : st) {
        if (!s.ok()) return s;
      }
    }
    return OkStatus();
  };
  return c;
}

TEST(HostRank, EveryRankOnItsOwnThreadMatchesTheSimulator) {
  for (Proto proto : {Proto::kSimple, Proto::kLL}) {
    for (const char* a : {"ring", "tree"}) {
      for (int n : {1, 2, 3, 5}) {
        WorldCheck c = RankCheck(a, algo::Collective::kAllReduce, n, 1001, FifoGeom{2, 256, proto});
        const Status st = RunWorldCheck(c);
        EXPECT_TRUE(st.ok()) << a << " n=" << n << ": " << st.ToString();
      }
    }
    for (algo::Collective coll : {algo::Collective::kAllGather, algo::Collective::kReduceScatter,
                                  algo::Collective::kBroadcast, algo::Collective::kAllToAll}) {
      WorldCheck c = RankCheck("ring", coll, 4, 333, FifoGeom{4, 128, proto});
      if (coll == algo::Collective::kAllToAll) c.algorithm = "pairwise";
      const Status st = RunWorldCheck(c);
      EXPECT_TRUE(st.ok()) << algo::CollectiveName(coll) << ": " << st.ToString();
    }
  }
}

// The counters carry on from call to call (as a communicator's connections do).
TEST(HostRank, RepeatedCallsOverTheSameConnections) {
  for (Proto proto : {Proto::kSimple, Proto::kLL}) {
    WorldCheck c = RankCheck("ring", algo::Collective::kAllReduce, 3, 777, FifoGeom{2, 128, proto}, 4);
    const Status st = RunWorldCheck(c);
    EXPECT_TRUE(st.ok()) << st.ToString();
  }
}

TEST(HostRank, BadRunsAreRefusedBeforeAnythingMoves) {
  algo::PrimProgram empty;
  RankRun run;
  EXPECT_EQ(RunHostRank(run).code(), Code::kInvalidArgument);  // no program
  run.program = &empty;
  run.geom = FifoGeom{2, 64, Proto::kSimple};
  EXPECT_TRUE(RunHostRank(run).ok());  // nothing to do
  run.op = RedOp::kAvg;
  EXPECT_EQ(RunHostRank(run).code(), Code::kInvalidArgument);
  run.op = RedOp::kSum;
  run.rank = 2;
  EXPECT_EQ(RunHostRank(run).code(), Code::kInvalidArgument);
}

// A peer that never runs: the stream times out naming what it waited for, never hangs.
TEST(HostRank, APeerThatNeverComesTimesOut) {
  algo::CollArgs a;
  a.coll = algo::Collective::kAllReduce;
  a.nranks = 2;
  a.rank = 0;
  a.count = 64;
  a.nchannels = 1;
  Result<algo::Schedule> s = algo::BuildSchedule("ring", a);
  ASSERT_TRUE(s.ok());
  Result<algo::PrimProgram> p = algo::LowerSchedule(*s);
  ASSERT_TRUE(p.ok());
  const FifoGeom g{2, 128, Proto::kSimple};
  Conns conns(2, 1, g);
  std::vector<float> in(64, 1), out(64);
  std::vector<float> scratch(std::max<uint64_t>(p->scratch_count, 1));
  RankRun run = conns.For(0, g);
  run.program = &*p;
  run.bufs[0] = reinterpret_cast<uint8_t*>(in.data());
  run.bufs[1] = reinterpret_cast<uint8_t*>(out.data());
  run.bufs[2] = reinterpret_cast<uint8_t*>(scratch.data());
  run.buf_bytes[0] = run.buf_bytes[1] = 64 * sizeof(float);
  run.buf_bytes[2] = scratch.size() * sizeof(float);
  run.timeout_s = 0.3;
  const Status st = RunHostRank(run);
  EXPECT_EQ(st.code(), Code::kTimeout) << st.ToString();
  EXPECT_NE(st.message().find("rank 1"), std::string::npos) << st.ToString();
}

// LL: the receiver reads a piece by its flags, and the sender stores tail into the receiver's
// memory after them. The receiver's run must not return (its owner may then free that memory)
// before that store landed. Rank 0 broadcasts alone (the FIFO has room); its last tail store is
// then held back, and rank 1's run ends only once it is put back.
TEST(HostRank, AnLLReceiverReturnsOnlyAfterItsSendersLastStore) {
  const FifoGeom g{4, 128, Proto::kLL};
  Conns conns(2, 1, g);
  std::vector<algo::PrimProgram> programs;
  for (int r = 0; r < 2; ++r) {
    algo::CollArgs a;
    a.coll = algo::Collective::kBroadcast;
    a.nranks = 2;
    a.rank = r;
    a.root = 0;
    a.count = 16;
    a.nchannels = 1;
    Result<algo::Schedule> s = algo::BuildSchedule("binomial", a);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    Result<algo::PrimProgram> p = algo::LowerSchedule(*s);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    programs.push_back(std::move(*p));
  }
  std::vector<float> data(16), out0(16), out1(16, 0), scratch(16);
  for (int i = 0; i < 16; ++i) data[i] = static_cast<float>(i + 1);
  auto run_rank = [&](int r, std::vector<float>& out) {
    RankRun run = conns.For(r, g);
    run.program = &programs[r];
    run.bufs[0] = reinterpret_cast<uint8_t*>(data.data());
    run.bufs[1] = reinterpret_cast<uint8_t*>(out.data());
    run.bufs[2] = reinterpret_cast<uint8_t*>(scratch.data());
    run.buf_bytes[0] = run.buf_bytes[1] = run.buf_bytes[2] = 16 * sizeof(float);
    run.timeout_s = 10;
    return RunHostRank(run);
  };
  ASSERT_TRUE(run_rank(0, out0).ok());
  ConnCtl* c = conns.At(0, 0, 1);
  const uint64_t tail = LoadAcquire(&c->tail);
  ASSERT_GT(tail, 0u);
  StoreRelease(&c->tail, tail - 1);  // the last store has not landed yet
  std::atomic<bool> returned{false};
  Status st1;
  std::thread receiver([&] {
    st1 = run_rank(1, out1);
    returned.store(true);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(returned.load()) << "the receiver returned before its sender's last store into its memory";
  StoreRelease(&c->tail, tail);
  receiver.join();
  EXPECT_TRUE(st1.ok()) << st1.ToString();
  EXPECT_EQ(out1, data);
}

}  // namespace
}  // namespace tutti::prims
