// The registry, argument validation and the IR's helpers.
#include <gtest/gtest.h>

#include "algorithms/registry.h"
#include "algorithms/schedule.h"
#include "algorithms/testing.h"

namespace tutti::algo {
namespace {

CollArgs Args(Collective c, int n, int rank, uint64_t count) {
  CollArgs a;
  a.coll = c;
  a.nranks = n;
  a.rank = rank;
  a.count = count;
  return a;
}

TEST(Registry, AlgorithmsFor) {
  EXPECT_EQ(AlgorithmsFor(Collective::kAllReduce), (std::vector<std::string>{"ring", "tree", "rhd", "doubling"}));
  EXPECT_EQ(AlgorithmsFor(Collective::kBroadcast), (std::vector<std::string>{"ring", "binomial", "flat"}));
  EXPECT_EQ(AlgorithmsFor(Collective::kBarrier), (std::vector<std::string>{"dissemination"}));
  for (int c = 0; c <= static_cast<int>(Collective::kBarrier); ++c)
    EXPECT_FALSE(AlgorithmsFor(static_cast<Collective>(c)).empty()) << CollectiveName(static_cast<Collective>(c));
  EXPECT_EQ(AlgorithmNames().size(), 9u);
}

TEST(Registry, Errors) {
  auto r = BuildSchedule("nope", Args(Collective::kAllReduce, 4, 0, 10));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find("ring, tree, binomial, flat, rhd, doubling, bruck, pairwise, dissemination"), std::string::npos)
      << r.status().message();
  r = BuildSchedule("tree", Args(Collective::kBroadcast, 4, 0, 10));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("does not implement broadcast"), std::string::npos);
  EXPECT_NE(r.status().message().find("ring, binomial, flat"), std::string::npos) << r.status().message();
}

TEST(Registry, Validation) {
  EXPECT_FALSE(BuildSchedule("ring", Args(Collective::kAllReduce, 0, 0, 1)).ok());
  EXPECT_FALSE(BuildSchedule("ring", Args(Collective::kAllReduce, 4, 4, 1)).ok());
  EXPECT_FALSE(BuildSchedule("ring", Args(Collective::kAllReduce, 4, -1, 1)).ok());
  CollArgs a = Args(Collective::kBroadcast, 4, 0, 1);
  a.root = 4;
  EXPECT_FALSE(BuildSchedule("ring", a).ok());
  a.root = -1;
  EXPECT_FALSE(BuildSchedule("binomial", a).ok());
  a = Args(Collective::kAllReduce, 4, 0, 1);
  a.root = 9;  // ignored by unrooted collectives
  EXPECT_TRUE(BuildSchedule("ring", a).ok());
  a.nchannels = 0;
  EXPECT_FALSE(BuildSchedule("ring", a).ok());
  a = Args(Collective::kAllGather, 4, 0, UINT64_MAX / 2);
  EXPECT_FALSE(BuildSchedule("ring", a).ok());
}

TEST(Schedule, Names) {
  EXPECT_STREQ(CollectiveName(Collective::kReduceScatter), "reduce_scatter");
  EXPECT_STREQ(BufName(Buf::kScratch), "scratch");
  CollArgs a = Args(Collective::kGather, 8, 3, 100);
  a.root = 2;
  a.nchannels = 2;
  EXPECT_EQ(DescribeArgs(a), "gather nranks=8 rank=3 root=2 count=100 nchannels=2 chunk=0");
  EXPECT_EQ(DescribeArgs(Args(Collective::kAllReduce, 2, 1, 5)), "all_reduce nranks=2 rank=1 count=5 nchannels=1 chunk=0");
}

TEST(Schedule, BufferCount) {
  CollArgs a = Args(Collective::kGather, 8, 3, 100);
  a.root = 2;
  EXPECT_EQ(BufferCount(a, Buf::kInput), 100u);
  EXPECT_EQ(BufferCount(a, Buf::kOutput), 0u);
  a.rank = 2;
  EXPECT_EQ(BufferCount(a, Buf::kOutput), 800u);
  a.coll = Collective::kAllToAll;
  EXPECT_EQ(BufferCount(a, Buf::kInput), 800u);
  a.coll = Collective::kBroadcast;
  a.rank = 1;
  EXPECT_EQ(BufferCount(a, Buf::kInput), 0u);
  EXPECT_EQ(BufferCount(a, Buf::kOutput), 100u);
}

// Schedules never write the input and are deterministic.
TEST(Schedule, Deterministic) {
  for (Collective c : {Collective::kAllReduce, Collective::kGather, Collective::kReduceScatter})
    for (const std::string& name : AlgorithmsFor(c)) {
      CollArgs a = Args(c, 7, 3, 123);
      a.root = 5;
      auto x = BuildSchedule(name, a), y = BuildSchedule(name, a);
      ASSERT_TRUE(x.ok() && y.ok());
      ASSERT_EQ(x->streams.size(), y->streams.size());
      for (size_t s = 0; s < x->streams.size(); ++s) {
        ASSERT_EQ(x->streams[s].steps.size(), y->streams[s].steps.size());
        for (size_t k = 0; k < x->streams[s].steps.size(); ++k) {
          const Step &p = x->streams[s].steps[k], &q = y->streams[s].steps[k];
          ASSERT_EQ(p.sends.size(), q.sends.size());
          for (size_t i = 0; i < p.sends.size(); ++i) {
            EXPECT_EQ(p.sends[i].peer, q.sends[i].peer);
            EXPECT_EQ(p.sends[i].region.offset, q.sends[i].region.offset);
          }
        }
      }
    }
}

// Many channels and a tiny chunk: streams stay within the executor's limit, results right.
TEST(Schedule, ManyStreamsAreCapped) {
  for (int c = 0; c < static_cast<int>(Collective::kBarrier); ++c)
    for (const std::string& name : AlgorithmsFor(static_cast<Collective>(c))) {
      CollArgs a = Args(static_cast<Collective>(c), 3, 0, 3000);
      a.nchannels = 300;
      a.chunk = 1;
      a.root = 1;
      auto s = BuildSchedule(name, a);
      ASSERT_TRUE(s.ok());
      EXPECT_LE(s->streams.size(), 512u) << name << " " << DescribeArgs(a);
      EXPECT_EQ(testing::CheckOne(name, a), "");
    }
}

}  // namespace
}  // namespace tutti::algo
