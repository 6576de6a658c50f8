// "dissemination": barrier in ceil(log2 n) rounds (Hensgen, Finkel & Manber 1988).
#pragma once

#include "algorithms/schedule.h"

namespace tutti::algo {

Schedule DisseminationBarrier(const CollArgs& a);

}  // namespace tutti::algo
