#include <gtest/gtest.h>

#include "algorithms/registry.h"
#include "algorithms/stats.h"
#include "algorithms/testing.h"

namespace tutti::algo {
namespace {

TEST(Bruck, AllGather) { EXPECT_GT(testing::Sweep("bruck", Collective::kAllGather), 0); }

TEST(Bruck, LogarithmicSteps) {
  for (int n = 2; n <= 64; ++n) {
    CollArgs a;
    a.coll = Collective::kAllGather;
    a.nranks = n;
    a.count = 10;
    auto st = AlgorithmStats("bruck", a, 4);
    ASSERT_TRUE(st.ok());
    int lg = 0;
    while ((1 << lg) < n) ++lg;
    EXPECT_EQ(st->steps, lg) << n;
    EXPECT_EQ(st->bytes_received, 4u * 10 * (n - 1)) << n;
  }
}

}  // namespace
}  // namespace tutti::algo
