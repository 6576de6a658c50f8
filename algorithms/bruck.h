// "bruck": all_gather in ceil(log2 n) steps for any n (Bruck et al. 1997). Arguments are
// validated by the registry.
#pragma once

#include "algorithms/schedule.h"

namespace tutti::algo {

Schedule BruckAllGather(const CollArgs& a);

}  // namespace tutti::algo
