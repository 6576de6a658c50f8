#include <gtest/gtest.h>

#include "algorithms/testing.h"

namespace tutti::algo {
namespace {

using testing::OrderOf;
using testing::Sweep;

TEST(Ring, AllReduce) { EXPECT_GT(Sweep("ring", Collective::kAllReduce), 0); }
TEST(Ring, ReduceScatter) { EXPECT_GT(Sweep("ring", Collective::kReduceScatter), 0); }
TEST(Ring, AllGather) { EXPECT_GT(Sweep("ring", Collective::kAllGather), 0); }
TEST(Ring, Broadcast) { EXPECT_GT(Sweep("ring", Collective::kBroadcast), 0); }
TEST(Ring, Reduce) { EXPECT_GT(Sweep("ring", Collective::kReduce), 0); }

CollArgs Args(Collective c, int n, uint64_t count, int root = 0) {
  CollArgs a;
  a.coll = c;
  a.nranks = n;
  a.count = count;
  a.root = root;
  return a;
}

// The documented reduction orders (ring.cc, chain.cc).
TEST(Ring, ReductionOrder) {
  // all_reduce, 4 ranks, 4 elements: block j = element j is folded over j, j+1, j+2, j+3.
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(OrderOf("ring", Args(Collective::kAllReduce, 4, 4), r, 0), "(((0 1) 2) 3)");
    EXPECT_EQ(OrderOf("ring", Args(Collective::kAllReduce, 4, 4), r, 2), "(((2 3) 0) 1)");
  }
  // reduce_scatter: block j over j+1, ..., j.
  EXPECT_EQ(OrderOf("ring", Args(Collective::kReduceScatter, 4, 1), 1, 0), "(((2 3) 0) 1)");
  // reduce to root 1: positions 1.. n-1 then the root.
  EXPECT_EQ(OrderOf("ring", Args(Collective::kReduce, 4, 1, 1), 1, 0), "(((2 3) 0) 1)");
}

}  // namespace
}  // namespace tutti::algo
