#include <gtest/gtest.h>

#include "algorithms/testing.h"

namespace tutti::algo {
namespace {

TEST(Rhd, AllReduce) { EXPECT_GT(testing::Sweep("rhd", Collective::kAllReduce), 0); }
TEST(Rhd, ReduceScatter) { EXPECT_GT(testing::Sweep("rhd", Collective::kReduceScatter), 0); }

// The documented order: fold pairs (2i, 2i+1) first, then new ranks at distance p/2, ..., 1,
// lower first.
TEST(Rhd, ReductionOrder) {
  CollArgs a;
  a.coll = Collective::kAllReduce;
  a.nranks = 4;
  a.count = 1;
  for (int r = 0; r < 4; ++r) EXPECT_EQ(testing::OrderOf("rhd", a, r, 0), "((0 2) (1 3))");
  a.nranks = 6;  // p = 4, rem = 2: new ranks {0,1}, {2,3}, 4, 5
  for (int r = 0; r < 6; ++r) EXPECT_EQ(testing::OrderOf("rhd", a, r, 0), "(((0 1) 4) ((2 3) 5))");
  a.coll = Collective::kReduceScatter;
  EXPECT_EQ(testing::OrderOf("rhd", a, 0, 0), "(((0 1) 4) ((2 3) 5))");
}

}  // namespace
}  // namespace tutti::algo
