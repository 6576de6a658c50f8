#include <gtest/gtest.h>

#include "algorithms/testing.h"

namespace tutti::algo {
namespace {

TEST(Binomial, Broadcast) { EXPECT_GT(testing::Sweep("binomial", Collective::kBroadcast), 0); }
TEST(Binomial, Reduce) { EXPECT_GT(testing::Sweep("binomial", Collective::kReduce), 0); }
TEST(Binomial, Gather) { EXPECT_GT(testing::Sweep("binomial", Collective::kGather), 0); }
TEST(Binomial, Scatter) { EXPECT_GT(testing::Sweep("binomial", Collective::kScatter), 0); }

// The documented order: ascending relative rank, bracketed by the binomial tree.
TEST(Binomial, ReductionOrder) {
  CollArgs a;
  a.coll = Collective::kReduce;
  a.nranks = 8;
  a.count = 1;
  a.root = 0;
  EXPECT_EQ(testing::OrderOf("binomial", a, 0, 0), "(((0 1) (2 3)) ((4 5) (6 7)))");
  a.nranks = 5;
  a.root = 3;
  EXPECT_EQ(testing::OrderOf("binomial", a, 3, 0), "(((3 4) (0 1)) 2)");
}

}  // namespace
}  // namespace tutti::algo
