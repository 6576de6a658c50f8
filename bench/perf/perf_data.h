// Test data whose expected results are exact, and the checker.
//
// Every element is a small integer chosen by a hash of (seed, index, rank), in a range that
// keeps every partial result of every reduction order exactly representable in the type:
//   L = the largest integer the type holds exactly and safely (int8 127, uint8 254, fp16 2048,
//       bf16 256, fp8_e4m3 16, fp8_e5m2 8, wider types 2^20)
//   sum:        A = min(n, L) ranks (rotating with the index) contribute values in [-m, m]
//               ([0, m] for unsigned types), m = min(L / A, 64); the others contribute 0
//   premul_sum: the same with factors 1 (even ranks) and 2 (odd ranks): A = min(n, L/2), m = L/(2A)
//   avg:        b + d with b in [1, m], m = min(L / n, 64), and d = +e / -e for the ranks of each
//               pair (2j, 2j+1) (e in {0, 1}): the sum n*b divides by n exactly
//   prod:       1 or 2; at most 3 ranks contribute a 2 (product <= 8)
//   min, max and the non-reducing collectives: values in [-m, m] ([0, m]), m = min(L, 64)
// Because every value and every partial sum is an integer of magnitude <= L, float results are
// exact whatever the reduction order, and the expected value is computed in int64.
// Output buffers are "poisoned" before each checked call with a value no result can take (NaN
// for floating types, the minimum of signed and the maximum of unsigned integer types).
#pragma once

#include <cstddef>
#include <cstdint>

#include "bench/perf/perf_coll.h"
#include "core/base/dtype.h"

namespace tutti::perf {

class Pattern {
 public:
  // count is the per-rank count of the call (Plan::count).
  Pattern(Coll coll, DataType type, RedOp op, int nranks, int root, size_t count, uint64_t seed);

  // Element k of `rank`'s input (send) array.
  int64_t Input(int rank, uint64_t k) const { return Gen(rank, k); }
  // This rank's premul_sum factor (1 for the other ops).
  double Scalar(int rank) const { return op_ == RedOp::kPremulSum ? 1 + (rank % 2) : 1; }
  // Whether `rank`'s output is defined (reduce and gather: only the root's).
  bool HasOutput(int rank) const;
  // Element k of `rank`'s output (recv) array.
  int64_t Expected(int rank, uint64_t k) const;
  // The reduction over all ranks of element k of the inputs.
  int64_t Reduced(uint64_t k) const;

  // The largest magnitude of an exactly representable, safe integer in `type` (L above).
  static int64_t Limit(DataType type);

 private:
  int64_t Gen(int rank, uint64_t k) const;

  Coll coll_;
  DataType type_;
  RedOp op_;
  int n_, root_;
  size_t count_;
  uint64_t seed_;
  bool signed_;
  int64_t m_ = 0;  // range of values
  int64_t a_ = 0;  // active ranks (sum, premul_sum)
};

// buf[j] = pattern.Input(rank, first + j) for j < elems.
void FillInput(const Pattern& p, int rank, DataType type, void* buf, size_t first, size_t elems);
// Writes the poison value into elems elements.
void FillPoison(DataType type, void* buf, size_t elems);
// Replaces element `index` by the poison value (the checker's self-test).
void Corrupt(DataType type, void* buf, size_t index);
// The element as a double (narrow floats widened exactly).
double LoadElement(DataType type, const void* buf, size_t index);

struct CheckResult {
  uint64_t wrong = 0;
  uint64_t first_index = 0;  // of the first wrong element
  double got = 0, expected = 0;
};
// Compares buf[0..elems) with pattern.Expected(rank, k). Nothing is wrong when !HasOutput(rank).
CheckResult CheckOutput(const Pattern& p, int rank, DataType type, const void* buf, size_t elems);

}  // namespace tutti::perf
