#include <gtest/gtest.h>

#include "algorithms/registry.h"
#include "algorithms/testing.h"

namespace tutti::algo {
namespace {

TEST(Doubling, AllReduce) { EXPECT_GT(testing::Sweep("doubling", Collective::kAllReduce), 0); }

// The documented order: fold pairs (2i, 2i+1) first, then new ranks at distance 1, 2, ...,
// lower first; every rank the same.
TEST(Doubling, ReductionOrder) {
  CollArgs a;
  a.coll = Collective::kAllReduce;
  a.nranks = 4;
  a.count = 1;
  for (int r = 0; r < 4; ++r) EXPECT_EQ(testing::OrderOf("doubling", a, r, 0), "((0 1) (2 3))");
  a.nranks = 6;  // p = 4, rem = 2: new ranks {0,1}, {2,3}, 4, 5
  for (int r = 0; r < 6; ++r) EXPECT_EQ(testing::OrderOf("doubling", a, r, 0), "(((0 1) (2 3)) (4 5))");
  a.nranks = 3;  // p = 2, rem = 1: new ranks {0,1}, 2
  for (int r = 0; r < 3; ++r) EXPECT_EQ(testing::OrderOf("doubling", a, r, 0), "((0 1) 2)");
}

// One step per doubling: 2 ranks exchange once (ring and rhd take two steps there).
TEST(Doubling, StepsAreLog2OfThePowerOfTwoPlusTheFold) {
  CollArgs a;
  a.coll = Collective::kAllReduce;
  a.count = 10;
  for (int n : {2, 4, 8, 16}) {
    a.nranks = n;
    for (int r = 0; r < n; ++r) {
      a.rank = r;
      auto s = BuildSchedule("doubling", a);
      ASSERT_TRUE(s.ok()) << s.status().ToString();
      ASSERT_EQ(s->streams.size(), 1u);
      int lg = 0;
      while ((1 << lg) < n) ++lg;
      EXPECT_EQ(static_cast<int>(s->streams[0].steps.size()), lg) << "n " << n << " rank " << r;
    }
  }
  a.nranks = 6;
  a.rank = 0;  // folded away: send, then receive the result
  EXPECT_EQ(BuildSchedule("doubling", a)->streams[0].steps.size(), 2u);
  a.rank = 1;  // fold, two doublings, send back
  EXPECT_EQ(BuildSchedule("doubling", a)->streams[0].steps.size(), 4u);
}

}  // namespace
}  // namespace tutti::algo
