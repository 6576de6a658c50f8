// tutti's CUDA copy and reduction kernels beside cudaMemcpy device-to-device, timed with CUDA
// events (manual time: kernel time, not launch overhead) in one run:
//   BM_Memcpy           cudaMemcpyAsync D2D
//   BM_CopyKernel       ReduceNAsync with one source (our copy path), float32
//   BM_Reduce2/<type>   ReduceNAsync sum of two sources, float32 and bfloat16
// bytes_per_second counts memory traffic (every byte read and written: 2 x size for the copies,
// 3 x size for a 2-source reduction), so the columns compare with cudaMemcpy's directly (the
// goals: copy >= 95%, reduce >= 90% of cudaMemcpy's traffic rate). Without a GPU every
// benchmark is skipped with the runtime's reason.
//
//   bazel build -c opt //bench:cuda_kernels_bench && bazel-bin/bench/cuda_kernels_bench
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "core/base/dtype.h"
#include "kernels/cuda/device.h"
#include "kernels/cuda/reduce.h"

namespace tutti {
namespace {

// Three device buffers of `bytes`, freed at the end of the benchmark.
struct Buffers {
  explicit Buffers(size_t bytes) {
    for (void*& p : b) {
      if (cudaMalloc(&p, bytes) != cudaSuccess) p = nullptr;
      if (p) cudaMemset(p, 0, bytes);
    }
  }
  ~Buffers() {
    for (void* p : b)
      if (p) cudaFree(p);
  }
  bool ok() const { return b[0] && b[1] && b[2]; }
  void* b[3] = {nullptr, nullptr, nullptr};
};

// Runs `enqueue` once per iteration on a stream and reports the time between events around it.
template <class F>
void Timed(benchmark::State& state, size_t bytes, int traffic_factor, F enqueue) {
  if (Result<int> n = cuda::DeviceCount(); !n.ok()) {
    state.SkipWithError(n.status().ToString().c_str());
    return;
  }
  Buffers buf(bytes);
  if (!buf.ok()) {
    state.SkipWithError("cudaMalloc failed");
    return;
  }
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  enqueue(buf.b, stream);  // warm-up
  cudaStreamSynchronize(stream);
  for (auto _ : state) {
    cudaEventRecord(a, stream);
    enqueue(buf.b, stream);
    cudaEventRecord(b, stream);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    state.SetIterationTime(ms * 1e-3);
  }
  if (cudaGetLastError() != cudaSuccess) state.SkipWithError("a CUDA call failed");
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes) * traffic_factor);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  cudaStreamDestroy(stream);
}

void BM_Memcpy(benchmark::State& state) {
  const size_t bytes = static_cast<size_t>(state.range(0));
  Timed(state, bytes, 2, [&](void** b, cudaStream_t s) { cudaMemcpyAsync(b[0], b[1], bytes, cudaMemcpyDeviceToDevice, s); });
}

void BM_CopyKernel(benchmark::State& state) {
  const size_t bytes = static_cast<size_t>(state.range(0));
  Timed(state, bytes, 2, [&](void** b, cudaStream_t s) {
    const void* srcs[1] = {b[1]};
    cuda::ReduceNAsync(b[0], srcs, 1, bytes / 4, DataType::kFloat32, RedOp::kSum, s).IgnoreError();
  });
}

void BM_Reduce2(benchmark::State& state, DataType type) {
  const size_t bytes = static_cast<size_t>(state.range(0));
  Timed(state, bytes, 3, [&](void** b, cudaStream_t s) {
    const void* srcs[2] = {b[1], b[2]};
    cuda::ReduceNAsync(b[0], srcs, 2, bytes / DataTypeSize(type), type, RedOp::kSum, s).IgnoreError();
  });
}

void Sizes(benchmark::internal::Benchmark* b) {
  for (int64_t s : {int64_t{1} << 20, int64_t{64} << 20, int64_t{256} << 20}) b->Arg(s);
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
}

BENCHMARK(BM_Memcpy)->Apply(Sizes);
BENCHMARK(BM_CopyKernel)->Apply(Sizes);
BENCHMARK_CAPTURE(BM_Reduce2, float32, DataType::kFloat32)->Apply(Sizes);
BENCHMARK_CAPTURE(BM_Reduce2, bfloat16, DataType::kBfloat16)->Apply(Sizes);

}  // namespace
}  // namespace tutti
