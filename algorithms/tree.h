// "tree": all_reduce by a double binary tree (two-tree reduction, Sanders, Speck & Traeff 2009;
// NCCL's "tree"). Arguments are validated by the registry (algorithms/registry.h).
#pragma once

#include "algorithms/schedule.h"

namespace tutti::algo {

// A node of a binary tree over ranks; -1 where there is none.
struct TreeNode {
  int parent = -1;
  int left = -1;
  int right = -1;
};

// Rank r's place in tree `t` (0 or 1) of the double binary tree over n ranks.
TreeNode DoubleTreeNode(int n, int t, int r);

Schedule TreeAllReduce(const CollArgs& a);

}  // namespace tutti::algo
