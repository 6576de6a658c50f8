#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/device.h"

namespace tutti::cuda {

namespace {
Status CudaError(const char* what, cudaError_t err) {
  return Status(Code::kUnavailable, std::string(what) + ": " + cudaGetErrorString(err));
}

// Grid-stride copy: 16-byte vectors over the aligned middle, bytes at the ends.
__global__ void CopyKernel(char* dst, const char* src, size_t bytes) {
  const size_t tid = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  const bool aligned = ((reinterpret_cast<uintptr_t>(dst) | reinterpret_cast<uintptr_t>(src)) & 15) == 0;
  size_t vec_bytes = 0;
  if (aligned) {
    vec_bytes = bytes & ~size_t{15};
    const size_t n = vec_bytes / 16;
    auto* d = reinterpret_cast<uint4*>(dst);
    auto* s = reinterpret_cast<const uint4*>(src);
    for (size_t i = tid; i < n; i += stride) d[i] = s[i];
  }
  for (size_t i = vec_bytes + tid; i < bytes; i += stride) dst[i] = src[i];
}
}  // namespace

Result<int> DeviceCount() {
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) return CudaError("cudaGetDeviceCount", err);
  if (n == 0) return UnavailableError("no CUDA device");
  return n;
}

Result<DeviceInfo> GetDeviceInfo(int device) {
  cudaDeviceProp p{};
  cudaError_t err = cudaGetDeviceProperties(&p, device);
  if (err != cudaSuccess) return CudaError("cudaGetDeviceProperties", err);
  DeviceInfo info;
  info.name = p.name;
  info.major = p.major;
  info.minor = p.minor;
  info.memory_bytes = p.totalGlobalMem;
  info.multiprocessors = p.multiProcessorCount;
  return info;
}

Status CopyOnDevice(void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return OkStatus();
  const int threads = 512;
  size_t blocks = (bytes / 16 + threads - 1) / threads;
  if (blocks < 1) blocks = 1;
  if (blocks > 1024) blocks = 1024;
  CopyKernel<<<static_cast<unsigned>(blocks), threads>>>(static_cast<char*>(dst), static_cast<const char*>(src), bytes);
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err != cudaSuccess) return CudaError("copy kernel", err);
  return OkStatus();
}

}  // namespace tutti::cuda
