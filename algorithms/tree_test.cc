#include <gtest/gtest.h>

#include <set>

#include "algorithms/testing.h"
#include "algorithms/tree.h"

namespace tutti::algo {
namespace {

TEST(Tree, AllReduce) { EXPECT_GT(testing::Sweep("tree", Collective::kAllReduce), 0); }

// Both trees are binary trees over all ranks, and every rank is interior in at most one.
TEST(Tree, DoubleTreeShape) {
  for (int n = 1; n <= 200; ++n) {
    int interior_in_both = 0;
    for (int t = 0; t < 2; ++t) {
      int roots = 0;
      std::vector<int> parent_seen(n, 0);
      for (int r = 0; r < n; ++r) {
        const TreeNode nd = DoubleTreeNode(n, t, r);
        if (nd.parent < 0) ++roots;
        for (int c : {nd.left, nd.right}) {
          if (c < 0) continue;
          ASSERT_EQ(DoubleTreeNode(n, t, c).parent, r) << "n=" << n << " tree " << t;
          ++parent_seen[c];
        }
      }
      EXPECT_EQ(roots, 1) << "n=" << n;
      for (int r = 0; r < n; ++r) EXPECT_EQ(parent_seen[r], DoubleTreeNode(n, t, r).parent < 0 ? 0 : 1);
    }
    for (int r = 0; r < n; ++r) {
      const TreeNode a = DoubleTreeNode(n, 0, r), b = DoubleTreeNode(n, 1, r);
      if ((a.left >= 0 || a.right >= 0) && (b.left >= 0 || b.right >= 0)) ++interior_in_both;
    }
    EXPECT_EQ(interior_in_both, 0) << "n=" << n;
  }
}

// The documented order: tree 0 in rank order, tree 1 mirrored (even n) or shifted (odd n).
TEST(Tree, ReductionOrder) {
  CollArgs a;
  a.coll = Collective::kAllReduce;
  a.nranks = 4;
  a.count = 2;  // element 0 over tree 0, element 1 over tree 1
  EXPECT_EQ(testing::OrderOf("tree", a, 0, 0), "((0 1 2) 3)");
  EXPECT_EQ(testing::OrderOf("tree", a, 2, 1), "((3 2 1) 0)");
  a.nranks = 5;
  EXPECT_EQ(testing::OrderOf("tree", a, 3, 0), "((0 1 2) 3 4)");
  EXPECT_EQ(testing::OrderOf("tree", a, 3, 1), "((4 0 1) 2 3)");
}

}  // namespace
}  // namespace tutti::algo
