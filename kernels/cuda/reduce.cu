// The reduction kernel on CUDA devices, built from the same functors and element conversions as
// the CPU kernels (kernels/functors.h), so that both give the same bits.
//
// Each thread reduces 16 bytes at a time (one uint4 load per source, one store) over the part
// of the arrays where dst and every source share their alignment modulo 16; the few elements
// before that part (head) and after it (tail) go one element per thread. When the pointers'
// alignments differ, every element goes the scalar way.
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "kernels/cuda/reduce.h"
#include "kernels/functors.h"
#include "kernels/reduce_args.h"

namespace tutti::cuda {

namespace {

using kernels::Accum;
using kernels::Narrow;
using kernels::Widen;

constexpr int kThreads = 256;
constexpr size_t kMaxBlocks = 4096;
constexpr int kMaxInlineSrcs = 16;

// Source pointers travel in the kernel's parameters, up to kMaxInlineSrcs of them; beyond that
// all of them are copied to device memory.
struct Sources {
  const void* inline_ptrs[kMaxInlineSrcs];
  const void* const* device_ptrs;
};

template <class S>
__device__ __forceinline__ const S* Src(const Sources& s, int k) {
  return static_cast<const S*>(s.device_ptrs != nullptr ? s.device_ptrs[k] : s.inline_ptrs[k]);
}

// 16 bytes seen as elements.
template <class S>
union Pack {
  static constexpr int kCount = 16 / sizeof(S);
  uint4 raw;
  S elems[kCount];
};

// Elements [0, head) and [head + nvec * V, count) one by one; [head, head + nvec * V) as nvec
// 16-byte vectors of V elements.
template <class S, class Op>
__global__ void __launch_bounds__(kThreads)
    ReduceKernel(S* dst, Sources srcs, int n, size_t count, size_t head, size_t nvec) {
  using A = Accum<S>;
  constexpr int V = Pack<S>::kCount;
  const size_t tid = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;

  for (size_t v = tid; v < nvec; v += stride) {
    const size_t at = head + v * V;
    Pack<S> p;
    p.raw = *reinterpret_cast<const uint4*>(Src<S>(srcs, 0) + at);
    A acc[V];
#pragma unroll
    for (int j = 0; j < V; ++j) acc[j] = Widen(p.elems[j]);
    for (int k = 1; k < n; ++k) {
      p.raw = *reinterpret_cast<const uint4*>(Src<S>(srcs, k) + at);
#pragma unroll
      for (int j = 0; j < V; ++j) acc[j] = Op::Apply(acc[j], Widen(p.elems[j]));
    }
#pragma unroll
    for (int j = 0; j < V; ++j) p.elems[j] = Narrow<S>(acc[j]);
    *reinterpret_cast<uint4*>(dst + at) = p.raw;
  }

  const size_t tail_begin = head + nvec * V;
  const size_t scalar_count = head + (count - tail_begin);
  for (size_t i = tid; i < scalar_count; i += stride) {
    const size_t e = i < head ? i : tail_begin + (i - head);
    A acc = Widen(Src<S>(srcs, 0)[e]);
    for (int k = 1; k < n; ++k) acc = Op::Apply(acc, Widen(Src<S>(srcs, k)[e]));
    dst[e] = Narrow<S>(acc);
  }
}

Status CudaError(const char* what, cudaError_t err) {
  return UnavailableError(std::string(what) + ": " + cudaGetErrorString(err));
}

// Splits count elements into a scalar head, 16-byte vectors and a scalar tail.
template <class S>
void Partition(const void* dst, const void* const* srcs, int n, size_t count, size_t* head,
               size_t* nvec) {
  constexpr size_t V = 16 / sizeof(S);
  const uintptr_t misalign = reinterpret_cast<uintptr_t>(dst) % 16;
  bool shared = true;
  for (int k = 0; k < n; ++k) shared &= reinterpret_cast<uintptr_t>(srcs[k]) % 16 == misalign;
  if (!shared) {
    *head = count;
    *nvec = 0;
    return;
  }
  const size_t lead = ((16 - misalign) % 16) / sizeof(S);  // elements up to the boundary
  *head = lead < count ? lead : count;
  *nvec = (count - *head) / V;
}

template <class S, class Op>
Status Launch(void* dst, const Sources& sources, const void* const* srcs, int n, size_t count,
              cudaStream_t stream) {
  size_t head = 0, nvec = 0;
  Partition<S>(dst, srcs, n, count, &head, &nvec);
  const size_t work = nvec + (count - nvec * (16 / sizeof(S)));
  size_t blocks = (work + kThreads - 1) / kThreads;
  blocks = blocks < 1 ? 1 : blocks > kMaxBlocks ? kMaxBlocks : blocks;
  ReduceKernel<S, Op><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
      static_cast<S*>(dst), sources, n, count, head, nvec);
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) return CudaError("reduce kernel launch", err);
  return OkStatus();
}

}  // namespace

Status ReduceNAsync(void* dst, const void* const* srcs, int n, size_t count, DataType type,
                    RedOp op, void* stream_ptr) {
  void* const dsts[1] = {dst};
  TUTTI_RETURN_IF_ERROR(
      kernels::CheckReduceArgs("cuda::ReduceN", "dst", dsts, 1, srcs, n, count, type, op));
  if (count == 0) return OkStatus();
  const auto stream = static_cast<cudaStream_t>(stream_ptr);
  if (n == 1) {  // a copy, bit for bit
    if (dst == srcs[0]) return OkStatus();
    const cudaError_t err = cudaMemcpyAsync(dst, srcs[0], count * DataTypeSize(type),
                                            cudaMemcpyDefault, stream);
    if (err != cudaSuccess) return CudaError("cudaMemcpyAsync", err);
    return OkStatus();
  }

  Sources sources{};
  void* device_ptrs = nullptr;
  if (n <= kMaxInlineSrcs) {
    for (int k = 0; k < n; ++k) sources.inline_ptrs[k] = srcs[k];
  } else {
    const size_t bytes = sizeof(void*) * static_cast<size_t>(n);
    cudaError_t err = cudaMallocAsync(&device_ptrs, bytes, stream);
    if (err != cudaSuccess) return CudaError("cudaMallocAsync", err);
    // From pageable memory: returns once srcs has been staged, so the caller may reuse it.
    err = cudaMemcpyAsync(device_ptrs, srcs, bytes, cudaMemcpyHostToDevice, stream);
    if (err != cudaSuccess) {
      cudaFreeAsync(device_ptrs, stream);
      return CudaError("cudaMemcpyAsync", err);
    }
    sources.device_ptrs = static_cast<const void* const*>(device_ptrs);
  }

  Status st = kernels::DispatchType(
      type,
      [&](auto type_tag) {
        using S = typename decltype(type_tag)::type;
        return kernels::DispatchOp<Accum<S>>(
            op,
            [&](auto op_tag) {
              using Op = typename decltype(op_tag)::type;
              return Launch<S, Op>(dst, sources, srcs, n, count, stream);
            },
            [] { return InternalError("unreachable op"); });
      },
      [] { return InternalError("unreachable type"); });

  if (device_ptrs != nullptr) {
    const cudaError_t err = cudaFreeAsync(device_ptrs, stream);
    if (st.ok() && err != cudaSuccess) return CudaError("cudaFreeAsync", err);
  }
  return st;
}

Status ReduceN(void* dst, const void* const* srcs, int n, size_t count, DataType type, RedOp op) {
  TUTTI_RETURN_IF_ERROR(ReduceNAsync(dst, srcs, n, count, type, op, nullptr));
  if (count == 0) return OkStatus();
  const cudaError_t err = cudaStreamSynchronize(nullptr);
  if (err != cudaSuccess) return CudaError("reduce kernel", err);
  return OkStatus();
}

}  // namespace tutti::cuda
