#include <gtest/gtest.h>

#include "algorithms/registry.h"
#include "algorithms/stats.h"
#include "algorithms/testing.h"

namespace tutti::algo {
namespace {

// The sweep checks that every rank has heard from every other before it finishes.
TEST(Dissemination, Barrier) {
  testing::SweepOptions o;
  for (int n = 1; n <= 130; ++n) o.nranks.push_back(n);
  EXPECT_GT(testing::Sweep("dissemination", Collective::kBarrier, o), 0);
}

TEST(Dissemination, Rounds) {
  CollArgs a;
  a.coll = Collective::kBarrier;
  a.nranks = 33;
  auto st = AlgorithmStats("dissemination", a, 4);
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->steps, 6);
  EXPECT_EQ(st->messages_sent, 6u);
  EXPECT_EQ(st->bytes_sent, 0u);
}

}  // namespace
}  // namespace tutti::algo
