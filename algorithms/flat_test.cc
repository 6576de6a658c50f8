#include <gtest/gtest.h>

#include "algorithms/stats.h"
#include "algorithms/testing.h"

namespace tutti::algo {
namespace {

TEST(Flat, Broadcast) { EXPECT_GT(testing::Sweep("flat", Collective::kBroadcast), 0); }
TEST(Flat, Reduce) { EXPECT_GT(testing::Sweep("flat", Collective::kReduce), 0); }
TEST(Flat, Gather) { EXPECT_GT(testing::Sweep("flat", Collective::kGather), 0); }
TEST(Flat, Scatter) { EXPECT_GT(testing::Sweep("flat", Collective::kScatter), 0); }
TEST(Flat, AllGather) { EXPECT_GT(testing::Sweep("flat", Collective::kAllGather), 0); }

// The documented order: ascending relative rank from the root, left to right.
TEST(Flat, ReductionOrder) {
  CollArgs a;
  a.coll = Collective::kReduce;
  a.nranks = 5;
  a.count = 1;
  a.root = 3;
  EXPECT_EQ(testing::OrderOf("flat", a, 3, 0), "(3 4 0 1 2)");
  a.nranks = 10;  // more sources than one reduction takes: the partial is carried on
  a.root = 0;
  EXPECT_EQ(testing::OrderOf("flat", a, 0, 0), "((0 1 2 3 4 5 6 7) 8 9)");
}

// One step on every rank, whatever n; the root moves all n - 1 messages.
TEST(Flat, OneStep) {
  for (Collective c : {Collective::kBroadcast, Collective::kReduce, Collective::kGather, Collective::kScatter}) {
    for (int n = 2; n <= 33; ++n) {
      CollArgs a;
      a.coll = c;
      a.nranks = n;
      a.count = 10;
      a.root = n / 2;
      auto st = AlgorithmStats("flat", a, 4);
      ASSERT_TRUE(st.ok()) << st.status().ToString();
      EXPECT_EQ(st->steps, 1) << CollectiveName(c) << " " << n;
      const bool to_root = c == Collective::kReduce || c == Collective::kGather;
      EXPECT_EQ(to_root ? st->messages_received : st->messages_sent, static_cast<uint64_t>(n - 1))
          << CollectiveName(c) << " " << n;
    }
  }
}

// All-gather: one step on every rank; each sends its block to and receives one from each
// other rank, straight between input and output (no scratch).
TEST(Flat, AllGatherIsOneStepWithoutScratch) {
  for (int n = 2; n <= 33; ++n) {
    CollArgs a;
    a.coll = Collective::kAllGather;
    a.nranks = n;
    a.count = 10;
    auto st = AlgorithmStats("flat", a, 4);
    ASSERT_TRUE(st.ok()) << st.status().ToString();
    EXPECT_EQ(st->steps, 1) << n;
    EXPECT_EQ(st->messages_sent, static_cast<uint64_t>(n - 1)) << n;
    EXPECT_EQ(st->messages_received, static_cast<uint64_t>(n - 1)) << n;
    EXPECT_EQ(st->scratch_bytes, 0u) << n;
  }
}

}  // namespace
}  // namespace tutti::algo
