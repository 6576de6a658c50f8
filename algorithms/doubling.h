// "doubling": recursive doubling all_reduce, any n, for small messages: log2 p steps in which
// every rank exchanges its whole partial with one partner and reduces, instead of ring's
// 2 (n - 1) or rhd's 2 log2 p steps (at the price of sending the whole vector every step).
// Arguments are validated by the registry.
#pragma once

#include "algorithms/schedule.h"

namespace tutti::algo {

Schedule DoublingAllReduce(const CollArgs& a);

}  // namespace tutti::algo
