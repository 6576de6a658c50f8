// The reduction kernel on a CUDA device: the same element semantics as kernels::ReduceN (the
// same functors and conversions, kernels/functors.h), on device-accessible pointers.
#pragma once

#include <cstddef>

#include "core/base/status.h"
#include "core/base/dtype.h"

namespace tutti::cuda {

// dst[i] = srcs[0][i] op ... op srcs[n-1][i], widened to the accumulation type, combined left to
// right and rounded once, exactly as kernels::ReduceN does on the CPU (bit for bit, except the
// payload of a NaN produced by arithmetic). dst and srcs[k] are device pointers (or mapped /
// managed memory); the array srcs itself is in host memory. The argument rules are those of
// kernels::ReduceN (n >= 1, op sum/prod/min/max, element-aligned, dst equal to a source or
// disjoint from it). n == 1 copies the bits. Waits for the result; kUnavailable on a CUDA error.
Status ReduceN(void* dst, const void* const* srcs, int n, size_t count, DataType type, RedOp op);

// The same, enqueued on `stream` (a cudaStream_t; nullptr is the default stream) without
// waiting. The srcs array may be reused as soon as this returns.
Status ReduceNAsync(void* dst, const void* const* srcs, int n, size_t count, DataType type,
                    RedOp op, void* stream);

}  // namespace tutti::cuda
