// Argument checks shared by every implementation of the reduction kernels (CPU and CUDA), so
// that both reject the same calls with the same messages ("ReduceN: srcs[1] is null (count 8)").
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "core/base/status.h"
#include "core/base/dtype.h"

namespace tutti::kernels {

// InvalidArgument("fn: what").
Status ArgError(const char* fn, const std::string& what);

// type is one of the DataType values.
Status CheckType(const char* fn, DataType type);
// op is sum, prod, min or max (avg and premul_sum are composed by the caller).
Status CheckElementwiseOp(const char* fn, RedOp op);
// count * DataTypeSize(type) fits in size_t.
Status CheckCount(const char* fn, size_t count, DataType type);
// p is non-null and aligned to the element size; name[index] (index < 0: name alone) names it
// in the message ("srcs[2]"), which is formatted only on failure.
Status CheckPointer(const char* fn, const char* name, int index, const void* p, size_t count, DataType type);
inline Status CheckPointer(const char* fn, const char* name, const void* p, size_t count, DataType type) {
  return CheckPointer(fn, name, -1, p, count, type);
}
// Whether two buffers of `bytes` overlap without coinciding.
bool PartiallyOverlap(const void* a, const void* b, size_t bytes);

// Everything ReduceN / ReduceCopyN require: a valid type and element-wise op, nsrc >= 1 and
// ndst >= 1, and, when count > 0, non-null aligned pointers where no destination partially
// overlaps a source or another destination. dst_name is "dst" (one destination, named without
// an index) or "dsts".
Status CheckReduceArgs(const char* fn, const char* dst_name, void* const* dsts, int ndst,
                       const void* const* srcs, int nsrc, size_t count, DataType type, RedOp op);

// The scalar of an integer ScaleBy as S, if it is a whole number in S's range.
template <class S>
bool IntegerScalar(double scalar, S* out) {
  constexpr double kHalf = static_cast<double>(uint64_t{1} << (8 * sizeof(S) - 1));
  constexpr double kLow = std::is_signed_v<S> ? -kHalf : 0.0;
  constexpr double kHigh = std::is_signed_v<S> ? kHalf : 2 * kHalf;
  if (!(scalar >= kLow && scalar < kHigh) || std::trunc(scalar) != scalar) return false;
  *out = static_cast<S>(scalar);
  return true;
}

}  // namespace tutti::kernels
