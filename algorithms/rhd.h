// "rhd": recursive halving-doubling (Rabenseifner; Thakur, Rabenseifner & Gropp 2005) for
// reduce_scatter and all_reduce, any n. Arguments are validated by the registry.
#pragma once

#include "algorithms/schedule.h"

namespace tutti::algo {

Schedule RhdAllReduce(const CollArgs& a);
Schedule RhdReduceScatter(const CollArgs& a);

}  // namespace tutti::algo
