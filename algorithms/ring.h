// "ring": reduce-scatter, all-gather and all-reduce (= reduce-scatter then all-gather) around
// the ring 0 -> 1 -> ... -> n-1 -> 0; broadcast and reduce as pipelined chains (chain.cc).
// Arguments are validated by the registry (algorithms/registry.h).
#pragma once

#include "algorithms/schedule.h"

namespace tutti::algo {

Schedule RingAllReduce(const CollArgs& a);
Schedule RingReduceScatter(const CollArgs& a);
Schedule RingAllGather(const CollArgs& a);
Schedule ChainBroadcast(const CollArgs& a);
Schedule ChainReduce(const CollArgs& a);

}  // namespace tutti::algo
