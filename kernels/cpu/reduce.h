// CPU reduction and copy kernels used by the collective executor.
//
// Narrow floating-point types (fp16, bf16, fp8) are widened to float, combined, and rounded once
// to the destination type (round to nearest even; fp8 e4m3 saturates to its largest finite
// value, as NCCL does). Integer arithmetic wraps (two's complement), as in C++ unsigned math.
//
// Element semantics are those of kernels/functors.h, shared with the CUDA kernels: min and max
// propagate NaN (if either operand is NaN the result is NaN) and keep the left operand on ties
// (-0 vs +0). The payload of a NaN produced by arithmetic is unspecified.
//
// Every pointer must be aligned to the element size, and with count == 0 pointers may be null.
// Every misuse (n < 1, a null pointer with count > 0, a misaligned pointer, a destination that
// partially overlaps a source, avg/premul_sum given to ReduceN, an unknown type or op, ...) is
// kInvalidArgument with a message naming the argument, e.g. "ReduceN: srcs[1] is null (count 8)".
//
// The loops are vectorised and compiled for AVX-512, AVX2 and baseline x86-64-v2; the loader
// picks one for the CPU (all give the same bits). float16 uses F16C where the CPU has it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/base/status.h"
#include "core/base/dtype.h"

namespace tutti::kernels {

// dst[i] = srcs[0][i] op srcs[1][i] op ... op srcs[n-1][i], combined left to right in the
// accumulation type and rounded once into dst. n >= 1 (n == 1 copies). dst may be exactly one
// of the srcs (same pointer) but must not partially overlap any. op is sum, prod, min or max;
// avg and premul_sum are composed by the caller from ScaleBy / DivideBy and sum.
Status ReduceN(void* dst, const void* const* srcs, int n, size_t count, DataType type, RedOp op);

// ReduceN for a caller that has checked every argument ReduceN checks (a small call's path,
// where those checks cost as much as the reduction): misuse is undefined behaviour.
Status ReduceNPrechecked(void* dst, const void* const* srcs, int n, size_t count, DataType type, RedOp op);

// The same result written to every dsts[j] (in one pass over the sources). ndst >= 1 and
// nsrc >= 1; a destination may be exactly a source or another destination, never partially.
Status ReduceCopyN(void* const* dsts, int ndst, const void* const* srcs, int nsrc, size_t count,
                   DataType type, RedOp op);

// dst[i] = src[i] * scalar (premul_sum), rounded once. For integer types the scalar must be a
// whole number that fits the type (else InvalidArgument). dst may equal src.
// For floating-point types the scalar is first converted to the accumulation type (float for
// fp16/bf16/fp8/fp32, double for fp64); the product is then rounded once into dst.
Status ScaleBy(void* dst, const void* src, size_t count, DataType type, double scalar);

// buf[i] = buf[i] / n (the final step of avg). Integers truncate toward zero. n >= 1.
// Floating-point types divide in double (n converted to double, exact below 2^53) and round the
// quotient once into the type.
Status DivideBy(void* buf, size_t count, DataType type, int64_t n);

}  // namespace tutti::kernels
