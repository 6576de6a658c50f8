// "flat": broadcast, reduce, gather and scatter in one step between the root and every other
// rank, for any n. The root posts all n - 1 transfers at once, so a call costs one message
// latency plus the root's time to issue them: fewer latencies than a binomial tree's ceil(log2 n)
// for small messages on few ranks, at the price of the root moving all n - 1 messages itself.
// All-gather likewise: every rank sends its block to every other one in one step.
// The cost model (core/coll/selector.cc) picks flat reduce and gather where that wins, and flat
// all_gather within a host; flat broadcast and scatter, whose root issues its sends one by one,
// run when asked for. Arguments are validated by the registry.
#pragma once

#include "algorithms/schedule.h"

namespace tutti::algo {

Schedule FlatBroadcast(const CollArgs& a);
Schedule FlatReduce(const CollArgs& a);
Schedule FlatGather(const CollArgs& a);
Schedule FlatAllGather(const CollArgs& a);
Schedule FlatScatter(const CollArgs& a);

}  // namespace tutti::algo
