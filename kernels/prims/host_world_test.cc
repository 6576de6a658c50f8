#include "kernels/prims/host_world.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "algorithms/lowering.h"
#include "algorithms/registry.h"
#include "kernels/prims/test_programs.h"
#include "kernels/prims/world_check.h"

namespace tutti::prims {
namespace {

using algo::Collective;
using testing::OneStream;
using testing::RecvOp;
using testing::SendOp;

// Tiny FIFOs so that messages take many pieces and slots are reused many times.
FifoGeom Tiny(Proto p) { return FifoGeom{2, 64, p}; }

struct Pair {
  std::string algorithm;
  Collective coll;
};

std::vector<Pair> AllPairs() {
  std::vector<Pair> out;
  for (const std::string& a : algo::AlgorithmNames()) {
    for (Collective c : algo::CollectivesOf(a)) out.push_back(Pair{a, c});
  }
  return out;
}

class EveryAlgorithm : public ::testing::TestWithParam<Pair> {};

// Every algorithm and collective, lowered with and without fusion, over both protocols: every
// rank's output bit for bit what the schedule computes.
TEST_P(EveryAlgorithm, MatchesTheScheduleBitForBit) {
  const Pair& pair = GetParam();
  int runs = 0;
  for (int n : {1, 2, 3, 4, 5, 8, 13}) {
    for (uint64_t count : {0, 1, 7, 100, 1000}) {
      if (pair.coll == Collective::kBarrier && count != 0) continue;
      for (auto [nchannels, chunk] : {std::pair{1, 0}, std::pair{2, 0}, std::pair{2, 3}}) {
        for (int root : {0, n - 1}) {
          if (!algo::IsRooted(pair.coll) && root != 0) continue;
          for (bool fuse : {true, false}) {
            for (Proto proto : {Proto::kSimple, Proto::kLL}) {
              WorldCheck c;
              c.algorithm = pair.algorithm;
              c.args.coll = pair.coll;
              c.args.nranks = n;
              c.args.count = count;
              c.args.nchannels = nchannels;
              c.args.chunk = static_cast<uint64_t>(chunk);
              c.args.root = root;
              c.lower = algo::LowerOptions{fuse, fuse};
              c.world.geom = Tiny(proto);
              const Status st = RunWorldCheck(c);
              ASSERT_TRUE(st.ok()) << st.ToString() << (fuse ? " (fused" : " (unfused")
                                   << (proto == Proto::kLL ? ", LL)" : ", Simple)");
              ++runs;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(runs, 0);
}

INSTANTIATE_TEST_SUITE_P(Prims, EveryAlgorithm, ::testing::ValuesIn(AllPairs()),
                         [](const ::testing::TestParamInfo<Pair>& info) {
                           return info.param.algorithm + "_" + algo::CollectiveName(info.param.coll);
                         });

// Ranks on several hosts: connections between hosts through a proxy on each side.
TEST_P(EveryAlgorithm, AcrossHostsThroughProxies) {
  const Pair& pair = GetParam();
  for (int n : {2, 3, 5, 8}) {
    for (uint64_t count : {0, 1, 100, 1000}) {
      if ((pair.coll == Collective::kBarrier) != (count == 0)) continue;
      for (int layout = 0; layout < 2; ++layout) {
        for (Proto proto : {Proto::kSimple, Proto::kLL}) {
          WorldCheck c;
          c.algorithm = pair.algorithm;
          c.args.coll = pair.coll;
          c.args.nranks = n;
          c.args.count = count;
          c.args.nchannels = 2;
          c.args.root = n / 2;
          c.world.geom = Tiny(proto);
          // Alternating hosts (every neighbour remote), or two blocks of ranks.
          for (int r = 0; r < n; ++r) c.world.hosts.push_back(layout == 0 ? r % 2 : r * 2 / n);
          const Status st = RunWorldCheck(c);
          ASSERT_TRUE(st.ok()) << st.ToString() << " layout " << layout << (proto == Proto::kLL ? " LL" : " Simple");
        }
      }
    }
  }
}

// Reductions of other types and ops: integer wrap, narrow floats (widened, narrowed once).
TEST(HostWorld, TypesAndOps) {
  const std::tuple<DataType, RedOp> cases[] = {
      {DataType::kBfloat16, RedOp::kSum}, {DataType::kFloat16, RedOp::kSum},  {DataType::kFp8E4M3, RedOp::kSum},
      {DataType::kFp8E5M2, RedOp::kMax},  {DataType::kInt8, RedOp::kProd},    {DataType::kUint8, RedOp::kSum},
      {DataType::kInt32, RedOp::kMin},    {DataType::kInt64, RedOp::kMax},    {DataType::kUint32, RedOp::kBxor},
      {DataType::kUint64, RedOp::kBor},   {DataType::kFloat64, RedOp::kMin},  {DataType::kInt32, RedOp::kBand},
  };
  const Pair pairs[] = {{"ring", Collective::kAllReduce},
                        {"tree", Collective::kAllReduce},
                        {"rhd", Collective::kReduceScatter},
                        {"binomial", Collective::kReduce}};
  for (const auto& [type, op] : cases) {
    for (const Pair& p : pairs) {
      for (int n : {3, 4}) {
        for (Proto proto : {Proto::kSimple, Proto::kLL}) {
          WorldCheck c;
          c.algorithm = p.algorithm;
          c.args.coll = p.coll;
          c.args.nranks = n;
          c.args.count = 37;
          c.type = type;
          c.op = op;
          c.world.geom = Tiny(proto);
          const Status st = RunWorldCheck(c);
          ASSERT_TRUE(st.ok()) << st.ToString() << " " << DataTypeName(type) << " " << RedOpName(op);
        }
      }
    }
  }
}

TEST(HostWorld, RingAllReduceFusesAndStaysExact) {
  WorldCheck c;
  c.args.coll = Collective::kAllReduce;
  c.args.nranks = 4;
  c.args.count = 1000;
  uint64_t fused = 0, early = 0;
  ASSERT_TRUE(RunWorldCheck(c, &fused, &early).ok());
  EXPECT_GT(fused, 0u);
  EXPECT_GT(early, 0u);
}

// A thread per stream, slow peers, counters that cross the LL flag's wrap-around.
TEST(HostWorld, ThreadsWithSlowPeersAndWrappingCounters) {
  for (Proto proto : {Proto::kSimple, Proto::kLL}) {
    for (const Pair& p : {Pair{"ring", Collective::kAllReduce}, Pair{"tree", Collective::kAllReduce},
                          Pair{"pairwise", Collective::kAllToAll}, Pair{"ring", Collective::kAllGather}}) {
      WorldCheck c;
      c.algorithm = p.algorithm;
      c.args.coll = p.coll;
      c.args.nranks = 4;
      c.args.count = 300;
      c.args.nchannels = 2;
      c.world.geom = Tiny(proto);
      c.world.mode = HostWorldOptions::Mode::kThreads;
      c.world.counter_base = 0xffffffffull - 10;
      c.world.timeout_s = 120;
      int moves = 0;
      c.world.after_move = [&moves](int rank, int stream) {
        if (rank == 1 && stream == 0 && (__atomic_add_fetch(&moves, 1, __ATOMIC_RELAXED) % 16) == 0) {
          std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
      };
      const Status st = RunWorldCheck(c);
      ASSERT_TRUE(st.ok()) << st.ToString();
    }
  }
}

TEST(HostWorld, ThreadsAcrossThreeHosts) {
  for (Proto proto : {Proto::kSimple, Proto::kLL}) {
    WorldCheck c;
    c.args.coll = Collective::kAllReduce;
    c.args.nranks = 6;
    c.args.count = 500;
    c.args.nchannels = 2;
    c.world.geom = Tiny(proto);
    c.world.mode = HostWorldOptions::Mode::kThreads;
    c.world.hosts = {0, 1, 2, 0, 1, 2};
    c.world.counter_base = 0xffffffffull - 7;
    c.world.timeout_s = 120;
    const Status st = RunWorldCheck(c);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
}

struct Buffers {
  explicit Buffers(int n) : in(n, std::vector<float>(64, 1.0f)), out(n, std::vector<float>(64)) {
    for (int r = 0; r < n; ++r) views.push_back(HostRankBuffers{in[r].data(), out[r].data(), nullptr});
  }
  std::vector<std::vector<float>> in, out;
  std::vector<HostRankBuffers> views;
};

TEST(HostWorld, APieceOfTheWrongSizeIsAMismatchNamingThePeer) {
  Buffers b(2);
  HostWorldOptions o;
  o.geom = Tiny(Proto::kSimple);
  const Status st =
      RunHostWorld(DataType::kFloat32, RedOp::kSum, {OneStream({SendOp(1, 5)}), OneStream({RecvOp(0, 4)})}, b.views, o);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), Code::kMismatch) << st.ToString();
  EXPECT_NE(st.message().find("rank 1 stream 0 step 0: a piece from rank 0 carries 20 bytes"), std::string::npos)
      << st.ToString();
}

TEST(HostWorld, SendsNobodyReceivesAreAMismatch) {
  for (auto mode : {HostWorldOptions::Mode::kRoundRobin, HostWorldOptions::Mode::kThreads}) {
    for (Proto proto : {Proto::kSimple, Proto::kLL}) {
      for (bool two_hosts : {false, true}) {
        Buffers b(2);
        HostWorldOptions o;
        o.geom = Tiny(proto);
        o.mode = mode;
        if (two_hosts) o.hosts = {0, 1};
        // Rank 0 sends twice, rank 1 receives once: every stream ends, one piece is left over.
        const Status st = RunHostWorld(DataType::kFloat32, RedOp::kSum,
                                       {OneStream({SendOp(1, 4), SendOp(1, 4)}), OneStream({RecvOp(0, 4)})}, b.views, o);
        EXPECT_EQ(st.code(), Code::kMismatch) << st.ToString();
        EXPECT_NE(st.message().find("rank 0 sent 1 more piece(s) to rank 1 on stream 0"), std::string::npos)
            << st.ToString();
      }
    }
  }
}

TEST(HostWorld, AnLLPieceOfTheWrongSizeIsAMismatchToo) {
  for (uint64_t sent : {3, 5}) {  // shorter and longer than expected
    Buffers b(2);
    HostWorldOptions o;
    o.geom = Tiny(Proto::kLL);
    const Status st = RunHostWorld(DataType::kFloat32, RedOp::kSum,
                                   {OneStream({SendOp(1, sent)}), OneStream({RecvOp(0, 4)})}, b.views, o);
    EXPECT_EQ(st.code(), Code::kMismatch) << st.ToString();
    EXPECT_NE(st.message().find("a piece from rank 0 carries " + std::to_string(sent * 4) + " bytes"),
              std::string::npos)
        << st.ToString();
  }
}

// Pieces of the same size from another call (another op, type or position in the ranks' calls):
// the call tags differ, and the receiver fails with kMismatch naming the peer, over both
// protocols, on one host and through the proxies between two.
TEST(HostWorld, APieceOfAnotherCallIsAMismatchNamingThePeer) {
  for (Proto proto : {Proto::kSimple, Proto::kLL}) {
    for (bool two_hosts : {false, true}) {
      Buffers b(2);
      HostWorldOptions o;
      o.geom = Tiny(proto);
      if (two_hosts) o.hosts = {0, 1};
      const std::vector<algo::PrimProgram> progs = {OneStream({SendOp(1, 4)}), OneStream({RecvOp(0, 4)})};
      o.tags = {0x1234abcdu, 0x1234abcdu};
      ASSERT_TRUE(RunHostWorld(DataType::kFloat32, RedOp::kSum, progs, b.views, o).ok());
      o.tags = {0x1234abcdu, 0x99u};
      const Status st = RunHostWorld(DataType::kFloat32, RedOp::kSum, progs, b.views, o);
      EXPECT_EQ(st.code(), Code::kMismatch) << st.ToString();
      EXPECT_NE(st.message().find("rank 1 stream 0 step 0: a piece from rank 0 belongs to another call (its call tag "
                                  "1234abcd, this rank's 00000099)"),
                std::string::npos)
          << st.ToString();
    }
  }
  // The tag is checked before the size: a piece of another call may have any size.
  Buffers b(2);
  HostWorldOptions o;
  o.geom = Tiny(Proto::kLL);
  o.tags = {1, 3};
  const Status st =
      RunHostWorld(DataType::kFloat32, RedOp::kSum, {OneStream({SendOp(1, 5)}), OneStream({RecvOp(0, 4)})}, b.views, o);
  EXPECT_NE(st.message().find("belongs to another call"), std::string::npos) << st.ToString();
  o.tags = {1};
  EXPECT_EQ(RunHostWorld(DataType::kFloat32, RedOp::kSum, {OneStream({SendOp(1, 4)}), OneStream({RecvOp(0, 4)})},
                         b.views, o)
                .code(),
            Code::kInvalidArgument);
}

// Simple: a piece's tag is checked as soon as the piece arrived, not only once the op may also
// send. Here each rank fills the other's FIFO, then forwards what it receives back: no op ever
// has credit, and without the early check both would wait for each other (a deadlock).
TEST(HostWorld, APieceOfAnotherCallIsSeenBeforeAnyCredit) {
  Buffers b(2);
  HostWorldOptions o;
  o.geom = Tiny(Proto::kSimple);  // 2 slots of 16 floats
  o.tags = {1, 2};
  std::vector<algo::PrimProgram> progs;
  for (int r = 0; r < 2; ++r) {
    algo::PrimOp forward = RecvOp(1 - r, 16);
    forward.send_peer = 1 - r;
    progs.push_back(OneStream({SendOp(1 - r, 32), forward}));
  }
  const Status st = RunHostWorld(DataType::kFloat32, RedOp::kSum, progs, b.views, o);
  EXPECT_EQ(st.code(), Code::kMismatch) << st.ToString();
  EXPECT_NE(st.message().find("belongs to another call"), std::string::npos) << st.ToString();
}

TEST(HostWorld, ADeadlockIsReportedWithWhatEachRankWaitsFor) {
  Buffers b(2);
  HostWorldOptions o;
  o.geom = Tiny(Proto::kSimple);
  const std::vector<algo::PrimProgram> progs = {OneStream({RecvOp(1, 4), SendOp(1, 4)}), OneStream({RecvOp(0, 4), SendOp(0, 4)})};
  const Status st = RunHostWorld(DataType::kFloat32, RedOp::kSum, progs, b.views, o);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("deadlock"), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find("rank 0 stream 0 step 0 waits to receive from rank 1 (piece 0 of 1)"), std::string::npos)
      << st.ToString();

  o.mode = HostWorldOptions::Mode::kThreads;
  o.timeout_s = 0.3;
  const Status t = RunHostWorld(DataType::kFloat32, RedOp::kSum, progs, b.views, o);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.code(), Code::kTimeout) << t.ToString();
  EXPECT_NE(t.message().find("waiting to receive from rank"), std::string::npos) << t.ToString();
}

TEST(HostWorld, BadArgumentsAreRejected) {
  Buffers b(2);
  HostWorldOptions o;
  o.geom = FifoGeom{2, 60, Proto::kSimple};
  const std::vector<algo::PrimProgram> progs = {OneStream({SendOp(1, 4)}), OneStream({RecvOp(0, 4)})};
  EXPECT_EQ(RunHostWorld(DataType::kFloat32, RedOp::kSum, progs, b.views, o).code(), Code::kInvalidArgument);
  o.geom = Tiny(Proto::kSimple);
  EXPECT_EQ(RunHostWorld(DataType::kFloat32, RedOp::kBxor, progs, b.views, o).code(), Code::kInvalidArgument);
  EXPECT_EQ(RunHostWorld(DataType::kFloat32, RedOp::kSum, {progs[0]}, b.views, o).code(), Code::kInvalidArgument);
  // Malformed programs: a peer outside the world, an early send after nothing, no sources.
  std::vector<algo::PrimProgram> bad = progs;
  bad[0].ops[0].send_peer = 2;
  Status st = RunHostWorld(DataType::kFloat32, RedOp::kSum, bad, b.views, o);
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_NE(st.message().find("rank 0's program: stream 0 step 0 op 0: a peer outside the world"), std::string::npos)
      << st.ToString();
  bad = progs;
  bad[0].ops[0].after = 0;
  EXPECT_EQ(RunHostWorld(DataType::kFloat32, RedOp::kSum, bad, b.views, o).code(), Code::kInvalidArgument);
  bad = progs;
  bad[1].ops[0].nsrcs = 0;
  EXPECT_EQ(RunHostWorld(DataType::kFloat32, RedOp::kSum, bad, b.views, o).code(), Code::kInvalidArgument);
  bad = progs;
  bad[1].steps[0].nops = 2;
  EXPECT_EQ(RunHostWorld(DataType::kFloat32, RedOp::kSum, bad, b.views, o).code(), Code::kInvalidArgument);
  // Buffers of known size: a program reaching past one is refused.
  std::vector<HostRankBuffers> sized = b.views;
  for (HostRankBuffers& v : sized) {
    v.input_bytes = v.output_bytes = 64 * sizeof(float);
  }
  bad = progs;
  bad[1].ops[0].dsts[0].offset = 61;  // 4 elements from 61: past 64
  st = RunHostWorld(DataType::kFloat32, RedOp::kSum, bad, sized, o);
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_NE(st.message().find("rank 1's program: stream 0 step 0 op 0 touches output[61, 65) of a buffer of 64"),
            std::string::npos)
      << st.ToString();
  EXPECT_TRUE(RunHostWorld(DataType::kFloat32, RedOp::kSum, progs, sized, o).ok());
  EXPECT_TRUE(RunHostWorld(DataType::kFloat32, RedOp::kSum, progs, b.views, o).ok());
  EXPECT_EQ(b.out[1][3], 1.0f);
}

// Teams of several threads per stream: the members' shares, votes and barriers, as a thread
// block runs them.
TEST(HostWorld, TeamsOfThreads) {
  for (int members : {2, 3}) {
    for (Proto proto : {Proto::kSimple, Proto::kLL}) {
      for (const Pair& p : {Pair{"ring", Collective::kAllReduce}, Pair{"tree", Collective::kAllReduce},
                            Pair{"bruck", Collective::kAllGather}, Pair{"binomial", Collective::kReduce}}) {
        WorldCheck c;
        c.algorithm = p.algorithm;
        c.args.coll = p.coll;
        c.args.nranks = 3;
        c.args.count = 203;
        c.type = DataType::kBfloat16;
        c.world.geom = Tiny(proto);
        c.world.mode = HostWorldOptions::Mode::kThreads;
        c.world.team_size = members;
        c.world.counter_base = 0xffffffffull - 5;
        c.world.timeout_s = 120;
        const Status st = RunWorldCheck(c);
        ASSERT_TRUE(st.ok()) << st.ToString() << " team of " << members;
      }
    }
  }
  // A deadlock still ends in a timeout with every member stopped.
  Buffers b(2);
  HostWorldOptions o;
  o.geom = Tiny(Proto::kLL);
  o.mode = HostWorldOptions::Mode::kThreads;
  o.team_size = 3;
  o.timeout_s = 0.3;
  const Status t = RunHostWorld(DataType::kFloat32, RedOp::kSum,
                                {OneStream({RecvOp(1, 4), SendOp(1, 4)}), OneStream({RecvOp(0, 4), SendOp(0, 4)})}, b.views, o);
  EXPECT_EQ(t.code(), Code::kTimeout) << t.ToString();
}

}  // namespace
}  // namespace tutti::prims
