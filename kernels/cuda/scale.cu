// One thread per element, grid-stride; the element functions are those of the CPU loops.
#include <cuda_runtime.h>

#include <string>
#include <type_traits>

#include "kernels/cuda/scale.h"
#include "kernels/functors.h"
#include "kernels/reduce_args.h"

namespace tutti::cuda {

namespace {

using kernels::Accum;

constexpr int kThreads = 256;
constexpr size_t kMaxBlocks = 4096;

template <class S>
__global__ void __launch_bounds__(kThreads) ScaleKernel(S* dst, const S* src, Accum<S> f, size_t count) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < count; i += stride)
    dst[i] = kernels::ScaleElem<S>(src[i], f);
}

template <class S>
__global__ void __launch_bounds__(kThreads) DivideKernel(S* buf, int64_t n, double dn, size_t count) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < count; i += stride)
    buf[i] = kernels::DivideElem<S>(buf[i], n, dn);
}

unsigned Blocks(size_t count) {
  size_t blocks = (count + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 1 ? 1 : blocks > kMaxBlocks ? kMaxBlocks : blocks);
}

Status Launched(const char* what) {
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) return UnavailableError(std::string(what) + " launch: " + cudaGetErrorString(err));
  return OkStatus();
}

}  // namespace

Status ScaleByAsync(void* dst, const void* src, size_t count, DataType type, double scalar, void* stream) {
  const char* fn = "cuda::ScaleBy";
  TUTTI_RETURN_IF_ERROR(kernels::CheckType(fn, type));
  TUTTI_RETURN_IF_ERROR(kernels::CheckCount(fn, count, type));
  return kernels::DispatchType(
      type,
      [&](auto tag) -> Status {
        using S = typename decltype(tag)::type;
        Accum<S> factor{};
        if constexpr (std::is_integral_v<S>) {
          if (!kernels::IntegerScalar<S>(scalar, &factor))
            return kernels::ArgError(fn, "scalar " + std::to_string(scalar) + " is not a whole number in the range of " +
                                             DataTypeName(type));
        } else {
          factor = static_cast<Accum<S>>(scalar);
        }
        if (count == 0) return OkStatus();
        TUTTI_RETURN_IF_ERROR(kernels::CheckPointer(fn, "src", src, count, type));
        TUTTI_RETURN_IF_ERROR(kernels::CheckPointer(fn, "dst", dst, count, type));
        if (kernels::PartiallyOverlap(dst, src, count * sizeof(S))) return kernels::ArgError(fn, "dst partially overlaps src");
        ScaleKernel<S><<<Blocks(count), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
            static_cast<S*>(dst), static_cast<const S*>(src), factor, count);
        return Launched("scale kernel");
      },
      [] { return InternalError("unreachable"); });
}

Status DivideByAsync(void* buf, size_t count, DataType type, int64_t n, void* stream) {
  const char* fn = "cuda::DivideBy";
  TUTTI_RETURN_IF_ERROR(kernels::CheckType(fn, type));
  TUTTI_RETURN_IF_ERROR(kernels::CheckCount(fn, count, type));
  if (n < 1) return kernels::ArgError(fn, "divisor must be >= 1 (got " + std::to_string(n) + ")");
  if (count == 0) return OkStatus();
  TUTTI_RETURN_IF_ERROR(kernels::CheckPointer(fn, "buf", buf, count, type));
  if (n == 1) return OkStatus();
  return kernels::DispatchType(
      type,
      [&](auto tag) -> Status {
        using S = typename decltype(tag)::type;
        DivideKernel<S><<<Blocks(count), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
            static_cast<S*>(buf), n, static_cast<double>(n), count);
        return Launched("divide kernel");
      },
      [] { return InternalError("unreachable"); });
}

}  // namespace tutti::cuda
