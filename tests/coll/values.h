// Element access for collective tests: read and write any DataType as double, and the exact
// inputs and references the checks use.
#pragma once

#include <cstdint>
#include <vector>

#include "core/base/dtype.h"

namespace tutti::testing {

double GetAs(DataType t, const void* buf, uint64_t i);
// Stores v converted to t (integers: modular, like the kernels' wrapping arithmetic).
void SetAs(DataType t, void* buf, uint64_t i, double v);
// Relative precision of a type (0 for integers).
double Epsilon(DataType t);

// Exact input of `rank` at element k for reduction op `op` (small integers whose sums,
// products, minima and maxima over <= 8 ranks are exact in every type).
double ExactInput(DataType t, RedOp op, int rank, uint64_t k);
// premul_sum's scalar of a rank (a whole number, so integers take it too).
double PremulScalar(int rank);
// The reduction of `vals` (one per rank, in rank order) as the kernels define it, in double:
// sum/prod/min/max/avg/premul_sum; integer avg truncates.
double ReduceRef(DataType t, RedOp op, const std::vector<double>& vals);

}  // namespace tutti::testing
