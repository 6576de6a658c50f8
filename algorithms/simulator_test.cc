// The simulator catches broken schedules: deadlocks, size mismatches, out-of-bounds regions,
// writes to the input, races between streams, reads of unwritten data, wrong results and
// ranks that disagree on the reduction order.
#include "algorithms/simulator.h"

#include <gtest/gtest.h>

#include "algorithms/check.h"
#include "algorithms/registry.h"
#include "algorithms/testing.h"

namespace tutti::algo {
namespace {

CollArgs Args(Collective c, int n, uint64_t count) {
  CollArgs a;
  a.coll = c;
  a.nranks = n;
  a.count = count;
  return a;
}
Transfer X(int peer, Buf b, uint64_t off, uint64_t count) { return Transfer{peer, Region{b, off, count}}; }
Region R(Buf b, uint64_t off, uint64_t count) { return Region{b, off, count}; }

std::vector<Schedule> Build(const std::string& algo, CollArgs a) {
  std::vector<Schedule> s;
  for (int r = 0; r < a.nranks; ++r) {
    a.rank = r;
    s.push_back(*BuildSchedule(algo, a));
  }
  return s;
}

// A correct exchange-and-reduce all_reduce of two ranks; `mirror` makes rank 1 combine its
// own contribution first (same sum, different order: not bitwise identical in general).
std::vector<Schedule> Exchange(bool mirror) {
  std::vector<Schedule> s(2);
  for (int r = 0; r < 2; ++r) {
    Step st;
    st.sends.push_back(X(1 - r, Buf::kInput, 0, 1));
    st.recvs.push_back(X(1 - r, Buf::kScratch, 0, 1));
    std::vector<Region> srcs{R(Buf::kInput, 0, 1), R(Buf::kScratch, 0, 1)};
    if (r == 1 && !mirror) std::swap(srcs[0], srcs[1]);  // both compute x0 op x1
    st.locals.push_back(LocalOp{LocalOp::Kind::kReduce, R(Buf::kOutput, 0, 1), srcs});
    s[r].streams.push_back(Stream{{st}});
    s[r].scratch_count = 1;
  }
  return s;
}

TEST(Simulator, IdenticalOrderAcrossRanks) {
  const CollArgs a = Args(Collective::kAllReduce, 2, 1);
  EXPECT_EQ(testing::CheckSchedules(a, Exchange(false)), "");
  const std::string err = testing::CheckSchedules(a, Exchange(true));
  EXPECT_NE(err.find("differently: (0 1) vs (1 0)"), std::string::npos) << err;
}

TEST(Simulator, Deadlock) {
  std::vector<Schedule> s(2);
  for (int r = 0; r < 2; ++r) {
    Step recv, send;
    recv.recvs.push_back(X(1 - r, Buf::kOutput, 0, 1));
    send.sends.push_back(X(1 - r, Buf::kInput, 0, 1));
    s[r].streams.push_back(Stream{{recv, send}});
  }
  auto res = SimulateSchedules(Args(Collective::kAllReduce, 2, 1), s);
  ASSERT_FALSE(res.ok());
  EXPECT_NE(res.status().message().find("deadlock"), std::string::npos);
  EXPECT_NE(res.status().message().find("rank 1 stream 0 step 0 waits: receive from rank 0"), std::string::npos)
      << res.status().message();
}

TEST(Simulator, StreamsMatchSeparately) {
  // Rank 0 sends on stream 1, rank 1 receives on stream 0: never matched.
  std::vector<Schedule> s(2);
  s[0].streams.resize(2);
  s[0].streams[1].steps.push_back(Step{{}, {X(1, Buf::kInput, 0, 1)}, {}});
  s[1].streams.resize(2);
  s[1].streams[0].steps.push_back(Step{{X(0, Buf::kOutput, 0, 1)}, {}, {}});
  auto res = SimulateSchedules(Args(Collective::kAllReduce, 2, 1), s);
  ASSERT_FALSE(res.ok());
  EXPECT_NE(res.status().message().find("deadlock"), std::string::npos);
}

TEST(Simulator, SizeMismatch) {
  std::vector<Schedule> s(2);
  s[0].streams.push_back(Stream{{Step{{}, {X(1, Buf::kInput, 0, 2)}, {}}}});
  s[1].streams.push_back(Stream{{Step{{X(0, Buf::kOutput, 0, 3)}, {}, {}}}});
  auto res = SimulateSchedules(Args(Collective::kAllReduce, 2, 3), s);
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.status().code(), Code::kMismatch);
  EXPECT_NE(res.status().message().find("sends 2 elements to rank 1"), std::string::npos) << res.status().message();
}

TEST(Simulator, FifoMatching) {
  // Two messages on one stream arrive in order: block 0 then block 1.
  std::vector<Schedule> s(2);
  s[0].streams.push_back(Stream{{Step{{}, {X(1, Buf::kInput, 0, 1)}, {}}, Step{{}, {X(1, Buf::kInput, 1, 1)}, {}}}});
  s[1].streams.push_back(Stream{{Step{{X(0, Buf::kOutput, 0, 1), X(0, Buf::kOutput, 1, 1)}, {}, {}}}});
  CollArgs a = Args(Collective::kBroadcast, 2, 2);
  auto res = SimulateSchedules(a, s);
  ASSERT_TRUE(res.ok()) << res.status().ToString();
  EXPECT_EQ(res->pool.Format(res->output[1][0], true), "0:0");
  EXPECT_EQ(res->pool.Format(res->output[1][1], true), "0:1");
}

Status StaticError(const Step& step, Collective c = Collective::kAllReduce, uint64_t scratch = 0) {
  std::vector<Schedule> s(2);
  s[0].streams.push_back(Stream{{step}});
  s[0].scratch_count = scratch;
  CollArgs a = Args(c, 2, 4);
  a.root = 1;  // rank 0 is not the root of rooted collectives
  return SimulateSchedules(a, s).status();
}

TEST(Simulator, StaticChecks) {
  EXPECT_NE(StaticError(Step{{}, {X(1, Buf::kInput, 2, 3)}, {}}).message().find("outside the input of 4"),
            std::string::npos);
  EXPECT_NE(StaticError(Step{{X(1, Buf::kInput, 0, 1)}, {}, {}}).message().find("writes input"), std::string::npos);
  EXPECT_NE(StaticError(Step{{}, {}, {LocalOp{LocalOp::Kind::kCopy, R(Buf::kInput, 0, 1), {R(Buf::kOutput, 0, 1)}}}})
                .message()
                .find("writes input"),
            std::string::npos);
  EXPECT_NE(StaticError(Step{{}, {X(1, Buf::kScratch, 0, 1)}, {}}, Collective::kAllReduce, 0).message().find("scratch"),
            std::string::npos);
  EXPECT_NE(StaticError(Step{{}, {X(0, Buf::kInput, 0, 1)}, {}}).message().find("peer 0"), std::string::npos);
  EXPECT_NE(StaticError(Step{{X(1, Buf::kOutput, 0, 2)}, {X(1, Buf::kOutput, 1, 2)}, {}}).message().find("overlaps send"),
            std::string::npos);
  EXPECT_NE(StaticError(Step{{}, {}, {LocalOp{LocalOp::Kind::kReduce, R(Buf::kOutput, 0, 2),
                                              {R(Buf::kOutput, 1, 2), R(Buf::kInput, 0, 2)}}}})
                .message()
                .find("partly overlaps"),
            std::string::npos);
  // Gather's output exists only on the root.
  EXPECT_NE(StaticError(Step{{X(1, Buf::kOutput, 0, 1)}, {}, {}}, Collective::kGather).message().find("outside"),
            std::string::npos);
}

TEST(Simulator, RaceBetweenStreams) {
  std::vector<Schedule> s(2);
  s[0].streams.push_back(Stream{{Step{{}, {}, {LocalOp{LocalOp::Kind::kCopy, R(Buf::kOutput, 0, 2), {R(Buf::kInput, 0, 2)}}}}}});
  s[0].streams.push_back(Stream{{Step{{}, {X(1, Buf::kOutput, 1, 1)}, {}}}});
  auto res = SimulateSchedules(Args(Collective::kAllReduce, 2, 4), s);
  ASSERT_FALSE(res.ok());
  EXPECT_NE(res.status().message().find("streams 0 and 1"), std::string::npos) << res.status().message();
}

TEST(Simulator, ReadOfUnwrittenData) {
  std::vector<Schedule> s(2);
  s[0].streams.push_back(Stream{{Step{{}, {X(1, Buf::kOutput, 0, 1)}, {}}}});
  s[1].streams.push_back(Stream{{Step{{X(0, Buf::kOutput, 0, 1)}, {}, {}}}});
  auto res = SimulateSchedules(Args(Collective::kAllReduce, 2, 1), s);
  ASSERT_FALSE(res.ok());
  EXPECT_NE(res.status().message().find("which nothing wrote"), std::string::npos) << res.status().message();
}

// A real schedule broken on purpose: every kind of damage is caught.
TEST(Simulator, BrokenRingIsCaught) {
  const CollArgs a = Args(Collective::kAllReduce, 5, 17);
  ASSERT_EQ(testing::CheckSchedules(a, Build("ring", a)), "");
  auto s = Build("ring", a);  // wrong input block in one reduction
  s[2].streams[0].steps[1].locals[0].srcs[1].offset += 1;
  EXPECT_NE(testing::CheckSchedules(a, s), "");
  s = Build("ring", a);  // a missing all-gather step on one rank
  s[3].streams[0].steps.pop_back();
  EXPECT_NE(testing::CheckSchedules(a, s).find("deadlock"), std::string::npos);
  s = Build("ring", a);  // a message to the wrong peer
  s[0].streams[0].steps[0].sends[0].peer = 2;
  EXPECT_NE(testing::CheckSchedules(a, s), "");
  s = Build("ring", a);  // a reduction dropped: that block misses a contribution
  s[1].streams[0].steps[2].locals.clear();
  EXPECT_NE(testing::CheckSchedules(a, s).find("wrong value"), std::string::npos);
}

// In place (Aliasing::kInPlace): input and output are one storage.
TEST(Simulator, InPlaceReadAfterOverwrite) {
  // A 2-rank all_reduce receiving into scratch is fine in place: the reduction reads the input
  // and writes the same storage in one pass.
  const CollArgs a = Args(Collective::kAllReduce, 2, 1);
  EXPECT_EQ(testing::CheckSchedules(a, Exchange(false), Aliasing::kInPlace), "");
  // Copying the received value into the output before reducing with the input overwrites the
  // input first (distinct buffers: fine).
  std::vector<Schedule> s(2);
  for (int r = 0; r < 2; ++r) {
    Step step, local;
    step.sends.push_back(X(1 - r, Buf::kInput, 0, 1));
    step.recvs.push_back(X(1 - r, Buf::kScratch, 0, 1));
    local.locals.push_back(LocalOp{LocalOp::Kind::kCopy, R(Buf::kOutput, 0, 1), {R(Buf::kScratch, 0, 1)}});
    std::vector<Region> srcs{R(Buf::kOutput, 0, 1), R(Buf::kInput, 0, 1)};
    if (r == 1) std::swap(srcs[0], srcs[1]);  // both compute x1 op x0
    local.locals.push_back(LocalOp{LocalOp::Kind::kReduce, R(Buf::kOutput, 0, 1), srcs});
    s[r].streams.push_back(Stream{{step, local}});
    s[r].scratch_count = 1;
  }
  EXPECT_EQ(testing::CheckSchedules(a, s), "");
  const std::string err = testing::CheckSchedules(a, s, Aliasing::kInPlace);
  EXPECT_NE(err.find("reduction reads input[0] in place, but its storage (element 0 of the in-place buffer) was "
                     "overwritten with "),
            std::string::npos)
      << err;
}

TEST(Simulator, InPlaceStaticChecks) {
  // all_gather of 2 ranks, count 2: rank 1's input is output[2, +2).
  CollArgs a = Args(Collective::kAllGather, 2, 2);
  auto check = [&](const Schedule& s1) {
    std::vector<Schedule> s(2);
    s[1] = s1;
    return SimulateSchedules(a, s, Aliasing::kInPlace).status();
  };
  // Sending the input while receiving into its storage in the same step.
  Status st = check(Schedule{{Stream{{Step{{X(0, Buf::kOutput, 3, 1)}, {X(0, Buf::kInput, 0, 2)}, {}}}}}});
  EXPECT_NE(st.message().find("overlaps send input[0, +2)"), std::string::npos) << st.ToString();
  // A copy from the input onto a shifted part of itself.
  st = check(Schedule{{Stream{{Step{{}, {}, {LocalOp{LocalOp::Kind::kCopy, R(Buf::kOutput, 1, 2), {R(Buf::kInput, 0, 2)}}}}}}}});
  EXPECT_NE(st.message().find("partly overlaps"), std::string::npos) << st.ToString();
  // Stream 0 sends input[1] (storage element 3), stream 1 receives into output[3]: a race in
  // place only.
  CollArgs r1 = a;
  r1.rank = 1;
  Schedule race;
  race.streams.push_back(Stream{{Step{{}, {X(0, Buf::kInput, 1, 1)}, {}}}});
  race.streams.push_back(Stream{{Step{{X(0, Buf::kOutput, 3, 1)}, {}, {}}}});
  EXPECT_TRUE(CheckSchedule(race, r1).ok());
  st = CheckSchedule(race, r1, Aliasing::kInPlace);
  EXPECT_NE(st.message().find("streams 0 and 1 both access input/output storage"), std::string::npos) << st.ToString();
  // The copy of the input onto its own block is no write (no race with a reader of the input).
  Schedule self;
  self.streams.push_back(Stream{{Step{{}, {}, {LocalOp{LocalOp::Kind::kCopy, R(Buf::kOutput, 2, 2), {R(Buf::kInput, 0, 2)}}}}}});
  self.streams.push_back(Stream{{Step{{}, {}, {LocalOp{LocalOp::Kind::kCopy, R(Buf::kOutput, 0, 2), {R(Buf::kInput, 0, 2)}}}}}});
  EXPECT_TRUE(CheckSchedule(self, r1, Aliasing::kInPlace).ok());
}

TEST(Simulator, InPlaceLayouts) {
  CollArgs a = Args(Collective::kAllGather, 4, 5);
  a.rank = 2;
  EXPECT_EQ(InPlaceBase(a, Buf::kInput), 10u);
  EXPECT_EQ(InPlaceBase(a, Buf::kOutput), 0u);
  a.coll = Collective::kReduceScatter;
  EXPECT_EQ(InPlaceBase(a, Buf::kInput), 0u);
  EXPECT_EQ(InPlaceBase(a, Buf::kOutput), 10u);
  a.coll = Collective::kScatter;
  a.root = 2;
  EXPECT_EQ(InPlaceBase(a, Buf::kOutput), 10u);
  a.root = 1;  // a non-root's output aliases nothing
  EXPECT_EQ(InPlaceBase(a, Buf::kOutput), 0u);
  a.coll = Collective::kGather;
  a.root = 2;
  EXPECT_EQ(InPlaceBase(a, Buf::kInput), 10u);
  EXPECT_EQ(InPlaceBase(a, Buf::kOutput), 0u);
  // In place, the output shows what the storage holds: ring all_gather's result as usual.
  a = Args(Collective::kAllGather, 3, 2);
  auto res = Simulate("ring", a, Aliasing::kInPlace);
  ASSERT_TRUE(res.ok()) << res.status().ToString();
  for (int r = 0; r < 3; ++r)
    for (uint64_t e = 0; e < 6; ++e) EXPECT_EQ(res->pool.Format(res->output[r][e], true), std::to_string(e / 2) + ":" + std::to_string(e % 2));
}

// Any op can evaluate the expressions; here a string concatenation shows the order.
TEST(Simulator, EvaluateNonCommutative) {
  auto res = Simulate("ring", Args(Collective::kAllReduce, 3, 3));
  ASSERT_TRUE(res.ok());
  auto out = EvaluateOutputs<std::string>(
      *res, [](int r, uint64_t i) { return std::to_string(r) + "." + std::to_string(i); },
      [](const std::string& x, const std::string& y) { return x + "," + y; });
  for (int r = 0; r < 3; ++r) EXPECT_EQ(out[r], (std::vector<std::string>{"0.0,1.0,2.0", "1.1,2.1,0.1", "2.2,0.2,1.2"}));
  auto d = EvaluateOutputs<double>(*res, [](int r, uint64_t i) { return r + 0.5 * i; }, [](double x, double y) { return x + y; });
  EXPECT_EQ(d[1][2], 0 + 1 + 2 + 3 * 1.0);
}

}  // namespace
}  // namespace tutti::algo
