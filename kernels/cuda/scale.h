// premul_sum's scaling and avg's division on a CUDA device: the same checks, element functions
// (kernels/functors.h, ScaleElem / DivideElem) and so the same bits as kernels::ScaleBy and
// kernels::DivideBy on the CPU.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/base/status.h"
#include "core/base/dtype.h"

namespace tutti::cuda {

// dst[i] = src[i] * scalar on device-accessible memory, enqueued on `stream` (a cudaStream_t;
// nullptr is the default stream) without waiting. dst may equal src. Argument errors are
// kInvalidArgument, CUDA errors kUnavailable.
Status ScaleByAsync(void* dst, const void* src, size_t count, DataType type, double scalar, void* stream);

// buf[i] = buf[i] / n, enqueued on `stream`. n >= 1.
Status DivideByAsync(void* buf, size_t count, DataType type, int64_t n, void* stream);

}  // namespace tutti::cuda
