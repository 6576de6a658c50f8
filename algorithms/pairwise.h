// "pairwise": all_to_all in n-1 exchange steps. Arguments are validated by the registry.
#pragma once

#include "algorithms/schedule.h"

namespace tutti::algo {

Schedule PairwiseAllToAll(const CollArgs& a);

}  // namespace tutti::algo
