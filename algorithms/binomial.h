// "binomial": broadcast, reduce (binomial.cc), gather and scatter (binomial_gather.cc) over a
// binomial tree rooted at `root`, for any n. Arguments are validated by the registry.
//
// Tree: relative rank v = r - root (mod n). The parent of v > 0 is v - lowbit(v); the children
// of v are v + m for m = 1, 2, 4, ... while m < lowbit(v) (every m for the root) and v + m < n.
// The subtree of v is [v, min(v + lowbit(v), n)), contiguous in relative ranks.
#pragma once

#include "algorithms/schedule.h"

namespace tutti::algo {

Schedule BinomialBroadcast(const CollArgs& a);
Schedule BinomialReduce(const CollArgs& a);
Schedule BinomialGather(const CollArgs& a);
Schedule BinomialScatter(const CollArgs& a);

namespace binomial {
// Relative-rank helpers (see above). lowbit(0) is taken as the smallest power of two >= n.
int LowBit(int v, int n);
int SubtreeEnd(int v, int n);            // one past the last relative rank of v's subtree
std::vector<int> ChildOffsets(int v, int n);  // the m's, ascending
}  // namespace binomial

}  // namespace tutti::algo
