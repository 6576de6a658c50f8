// CPU reduction and copy kernels used by the collective executor.
//
// Narrow floating-point types (fp16, bf16, fp8) are widened to float, combined, and rounded once
// to the destination type (round to nearest even; fp8 e4m3 saturates to its largest finite
// value, as NCCL does). Integer arithmetic wraps (two's complement), as in C++ unsigned math.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/status.h"
#include "kernels/dtype.h"

namespace tutti::kernels {

// dst[i] = srcs[0][i] op srcs[1][i] op ... op srcs[n-1][i], combined left to right in the
// accumulation type and rounded once into dst. n >= 1 (n == 1 copies). dst may be exactly one
// of the srcs (same pointer) but must not partially overlap any. op is sum, prod, min or max;
// avg and premul_sum are composed by the caller from ScaleBy / DivideBy and sum.
Status ReduceN(void* dst, const void* const* srcs, int n, size_t count, DataType type, RedOp op);

// The same result written to every dsts[j] (in one pass over the sources).
Status ReduceCopyN(void* const* dsts, int ndst, const void* const* srcs, int nsrc, size_t count,
                   DataType type, RedOp op);

// dst[i] = src[i] * scalar (premul_sum), rounded once. For integer types the scalar must be a
// whole number that fits the type (else InvalidArgument). dst may equal src.
Status ScaleBy(void* dst, const void* src, size_t count, DataType type, double scalar);

// buf[i] = buf[i] / n (the final step of avg). Integers truncate toward zero. n >= 1.
Status DivideBy(void* buf, size_t count, DataType type, int64_t n);

}  // namespace tutti::kernels
