#include "core/coll/selector.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

namespace tutti {
namespace {

using algo::Collective;

TEST(Selector, ParsesGlobalAndPerCollective) {
  auto s = Selector::Parse("allreduce:tree,allgather:ring");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(*s->Choose(Collective::kAllReduce, 8, 1 << 20, "shm", ""), "tree");
  EXPECT_EQ(*s->Choose(Collective::kAllGather, 8, 8, "shm", ""), "ring");
  auto g = Selector::Parse("ring");
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(*g->Choose(Collective::kAllReduce, 8, 8, "tcp", ""), "ring");
  // A global choice applies only where the algorithm exists.
  EXPECT_EQ(*g->Choose(Collective::kBarrier, 8, 0, "tcp", ""), "dissemination");
  // The call's own option wins.
  EXPECT_EQ(*g->Choose(Collective::kAllReduce, 8, 8, "tcp", "rhd"), "rhd");
}

TEST(Selector, RejectsUnknownNames) {
  EXPECT_FALSE(Selector::Parse("allreduce:nosuch").ok());
  EXPECT_FALSE(Selector::Parse("frobnicate:ring").ok());
  EXPECT_FALSE(Selector::Parse("nosuch").ok());
  EXPECT_FALSE(Selector::Parse("ring,tree").ok());
  auto s = Selector::Parse("");
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(s->Choose(Collective::kBarrier, 4, 0, "shm", "ring").ok());
  Status st = Selector::Parse("allreduce:nosuch").status();
  EXPECT_NE(st.message().find("ring"), std::string::npos) << st.message();  // lists what exists
}

TEST(Selector, ModelPrefersLatencyAlgorithmsForSmallAndRingForLarge) {
  auto s = Selector::Parse("");
  ASSERT_TRUE(s.ok());
  std::string small = *s->Choose(Collective::kAllReduce, 16, 64, "tcp", "");
  std::string large = *s->Choose(Collective::kAllReduce, 16, 256 << 20, "tcp", "");
  EXPECT_NE(small, "ring");
  EXPECT_EQ(large, "ring");
  EXPECT_EQ(*s->Choose(Collective::kAllGather, 16, 64, "tcp", ""), "bruck");
  EXPECT_EQ(*s->Choose(Collective::kBroadcast, 16, 64, "tcp", ""), "binomial");
  // Few ranks, small data: a root that receives from every rank does so in one step; one that
  // sends to every rank issues the sends one by one, so it stays on the tree.
  // (Over shm, where a receive counts half a step, flat wins only on 3 ranks; small calls take
  // the slots there anyway.)
  for (Collective c : {Collective::kReduce, Collective::kGather}) {
    EXPECT_EQ(*s->Choose(c, 4, 64, "tcp", ""), "flat") << algo::CollectiveName(c);
    EXPECT_EQ(*s->Choose(c, 8, 64, "tcp", ""), "flat") << algo::CollectiveName(c);
    EXPECT_NE(*s->Choose(c, 32, 64, "tcp", ""), "flat") << algo::CollectiveName(c);
    EXPECT_NE(*s->Choose(c, 8, 64, "shm", ""), "flat") << algo::CollectiveName(c);
    EXPECT_EQ(*s->Choose(c, 3, 64, "shm", ""), "flat") << algo::CollectiveName(c);
    EXPECT_EQ(*s->Choose(c, 13, 64, "tcp", ""), "flat") << algo::CollectiveName(c);
    EXPECT_NE(*s->Choose(c, 14, 64, "tcp", ""), "flat") << algo::CollectiveName(c);
  }
  for (Collective c : {Collective::kBroadcast, Collective::kScatter})
    for (int p : {2, 3, 4, 8, 64}) EXPECT_NE(*s->Choose(c, p, 64, "tcp", ""), "flat") << algo::CollectiveName(c) << p;
  EXPECT_NE(*s->Choose(Collective::kReduce, 4, 4 << 20, "tcp", ""), "flat");
  // Small all_reduce: recursive doubling (one exchange at 2 ranks).
  EXPECT_EQ(*s->Choose(Collective::kAllReduce, 2, 8, "tcp", ""), "doubling");
  // reduce_scatter over tcp: rhd while latency counts, ring (pipelined, hiding its reductions
  // behind the link) once the data does.
  EXPECT_EQ(*s->Choose(Collective::kReduceScatter, 4, 4 << 10, "tcp", ""), "rhd");
  EXPECT_EQ(*s->Choose(Collective::kReduceScatter, 4, 4 << 20, "tcp", ""), "ring");
  EXPECT_EQ(*s->Choose(Collective::kReduceScatter, 4, 4 << 20, "shm", ""), "rhd");
  // all_gather within a host: flat (one step) for blocks from 256 KiB, from 3 ranks; not between
  // hosts, in device kernels or with smaller blocks.
  EXPECT_EQ(*s->Choose(Collective::kAllGather, 4, 1 << 20, "shm", ""), "flat");
  EXPECT_EQ(*s->Choose(Collective::kAllGather, 3, 1 << 20, "shm", ""), "flat");
  EXPECT_EQ(*s->Choose(Collective::kAllGather, 8, 64 << 20, "shm", ""), "flat");
  EXPECT_EQ(*s->Choose(Collective::kAllGather, 2, 64 << 20, "shm", ""), "ring");
  EXPECT_NE(*s->Choose(Collective::kAllGather, 4, 512 << 10, "shm", ""), "flat");
  EXPECT_NE(*s->Choose(Collective::kAllGather, 4, 64 << 20, "tcp", ""), "flat");
  EXPECT_NE(*s->Choose(Collective::kAllGather, 4, 64 << 20, "shm", "", /*device=*/true), "flat");
  // Likewise gather and scatter with large blocks (over tcp the rule above holds).
  for (Collective c : {Collective::kGather, Collective::kScatter}) {
    EXPECT_EQ(*s->Choose(c, 4, 4 << 20, "shm", ""), "flat") << algo::CollectiveName(c);
    EXPECT_EQ(*s->Choose(c, 8, 2 << 20, "shm", ""), "flat") << algo::CollectiveName(c);
    EXPECT_NE(*s->Choose(c, 8, 1 << 20, "shm", ""), "flat") << algo::CollectiveName(c);
    EXPECT_NE(*s->Choose(c, 4, 4 << 20, "shm", "", /*device=*/true), "flat") << algo::CollectiveName(c);
  }
}

TEST(Selector, ModelTimesFollowTheFormulas) {
  CostParams c{10e-6, 1e-9, 0.5e-9};
  // Ring all-reduce on 4 ranks, 1 MB: 6 alpha + 1.5 n beta + 0.75 n gamma.
  EXPECT_NEAR(ModelTime("ring", Collective::kAllReduce, 4, 1e6, c), 6 * 10e-6 + 1.5e-3 + 0.375e-3, 1e-9);
  EXPECT_EQ(ModelTime("ring", Collective::kAllReduce, 1, 1e6, c), 0);
  EXPECT_TRUE(std::isinf(ModelTime("bruck", Collective::kAllReduce, 4, 1e6, c)));
}

TEST(Selector, CostOverrideFromEnvironment) {
  setenv("TUTTI_COST_TCP", "5,10,20", 1);
  auto c = CostParamsFor("tcp");
  ASSERT_TRUE(c.ok());
  EXPECT_NEAR(c->alpha_s, 5e-6, 1e-12);
  EXPECT_NEAR(c->beta_s_per_byte, 1e-10, 1e-15);
  setenv("TUTTI_COST_TCP", "fast", 1);
  EXPECT_FALSE(CostParamsFor("tcp").ok());
  unsetenv("TUTTI_COST_TCP");
}

TEST(Selector, CollectiveNames) {
  Collective c;
  EXPECT_TRUE(ParseCollective("all_reduce", &c));
  EXPECT_EQ(c, Collective::kAllReduce);
  EXPECT_TRUE(ParseCollective("ReduceScatter", &c));
  EXPECT_EQ(c, Collective::kReduceScatter);
  EXPECT_FALSE(ParseCollective("allsum", &c));
}

TEST(ReadsReducedPieces, MidSizeAllReducesAndReduceScattersWhereEveryRankHasACpu) {
  EXPECT_TRUE(ReadsReducedPieces(Collective::kAllReduce, kReducedReadMin, 2, 2));
  EXPECT_TRUE(ReadsReducedPieces(Collective::kReduceScatter, kReducedReadMax, 2, 4));
  EXPECT_FALSE(ReadsReducedPieces(Collective::kAllReduce, kReducedReadMin - 1, 2, 2));
  EXPECT_FALSE(ReadsReducedPieces(Collective::kAllReduce, kReducedReadMax + 1, 2, 2));
  EXPECT_FALSE(ReadsReducedPieces(Collective::kReduce, kReducedReadMin, 2, 2));
  EXPECT_FALSE(ReadsReducedPieces(Collective::kAllReduce, kReducedReadMin, 4, 2));  // more ranks than CPUs
  EXPECT_FALSE(ReadsReducedPieces(Collective::kAllReduce, kReducedReadMin, 2, 0));  // CPUs unknown
}

}  // namespace
}  // namespace tutti
