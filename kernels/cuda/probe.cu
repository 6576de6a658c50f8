// The probe: attributes through the runtime (and the driver's cuDeviceGetAttribute, reached
// through the runtime's entry-point query, so nothing links libcuda directly), and a ping-pong
// between a kernel and this thread over a shared anonymous mapping registered with CUDA.
#include "kernels/cuda/probe.h"

#include <cuda.h>
#include <cuda_runtime.h>
#include <sys/mman.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "kernels/cuda/device.h"

namespace tutti::cuda {
namespace {

// The kernel answers every ping: waits for flag[0] == i, then writes flag[1] = i.
__global__ void PingPong(volatile unsigned long long* flags, unsigned long long rounds, unsigned long long spin_limit) {
  for (unsigned long long i = 1; i <= rounds; ++i) {
    unsigned long long spins = 0;
    while (flags[0] != i) {
      if (++spins > spin_limit) return;  // the host stopped: give up rather than hang
    }
    __threadfence_system();
    flags[1] = i;
  }
}

std::string YesNo(int v) { return v ? "yes" : "no"; }

int Attr(cudaDeviceAttr a, int dev) {
  int v = 0;
  if (cudaDeviceGetAttribute(&v, a, dev) != cudaSuccess) return -1;
  return v;
}

// cuDeviceGetAttribute through the runtime's driver entry point (-1 when unreachable).
int DriverAttr(CUdevice_attribute a, int dev) {
  using Fn = CUresult (*)(int*, CUdevice_attribute, CUdevice);
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q;
  if (cudaGetDriverEntryPointByVersion("cuDeviceGetAttribute", &fn, 12000, cudaEnableDefault, &q) != cudaSuccess ||
      q != cudaDriverEntryPointSuccess || fn == nullptr) {
    return -1;
  }
  int v = 0;
  return reinterpret_cast<Fn>(fn)(&v, a, dev) == CUDA_SUCCESS ? v : -1;
}

std::string MappedRoundTrip(int dev) {
  cudaSetDevice(dev);
  const size_t bytes = 4096;
  void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return "mmap failed";
  auto* flags = static_cast<volatile unsigned long long*>(mem);
  flags[0] = flags[1] = 0;
  if (cudaError_t e = cudaHostRegister(mem, bytes, cudaHostRegisterMapped | cudaHostRegisterPortable);
      e != cudaSuccess) {
    munmap(mem, bytes);
    return std::string("cudaHostRegister: ") + cudaGetErrorString(e);
  }
  void* dptr = nullptr;
  cudaHostGetDevicePointer(&dptr, mem, 0);
  const unsigned long long rounds = 1000;
  PingPong<<<1, 1>>>(static_cast<volatile unsigned long long*>(dptr), rounds, 1ull << 32);
  const auto t0 = std::chrono::steady_clock::now();
  bool ok = cudaGetLastError() == cudaSuccess;
  for (unsigned long long i = 1; ok && i <= rounds; ++i) {
    flags[0] = i;
    while (flags[1] != i) {
      if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(10)) {
        ok = false;
        break;
      }
    }
  }
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (!ok) flags[0] = ~0ull;  // lets the kernel run out of spins
  cudaDeviceSynchronize();
  cudaHostUnregister(mem);
  munmap(mem, bytes);
  char line[160];
  if (ok) {
    std::snprintf(line, sizeof line, "%llu round trips in %.2f ms (%.2f us each)", rounds, ms, ms * 1e3 / rounds);
  } else {
    std::snprintf(line, sizeof line, "FAILED after %.0f ms (the kernel never answered)", ms);
  }
  return line;
}

}  // namespace

Result<std::string> ProbeDevices() {
  Result<int> count = DeviceCount();
  if (!count.ok()) return count.status();
  std::string out;
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  out += "driver " + std::to_string(driver) + ", runtime " + std::to_string(runtime) + ", " +
         std::to_string(*count) + " device(s)\n";
  for (int d = 0; d < *count; ++d) {
    Result<DeviceInfo> info = GetDeviceInfo(d);
    if (!info.ok()) {
      out += "device " + std::to_string(d) + ": " + info.status().ToString() + "\n";
      continue;
    }
    char head[256];
    std::snprintf(head, sizeof head, "device %d: %s, cc %d.%d, %d SMs, %.1f GiB\n", d, info->name.c_str(), info->major,
                  info->minor, info->multiprocessors, info->memory_bytes / double(1ull << 30));
    out += head;
    const std::string p = "  ";
    out += p + "unified addressing: " + YesNo(Attr(cudaDevAttrUnifiedAddressing, d)) + "\n";
    out += p + "host memory registration: " + YesNo(Attr(cudaDevAttrHostRegisterSupported, d)) +
           ", same address on device: " + YesNo(Attr(cudaDevAttrCanUseHostPointerForRegisteredMem, d)) + "\n";
    out += p + "ipc events: " + YesNo(Attr(cudaDevAttrIpcEventSupport, d)) + "\n";
    out += p + "memory pool ipc handle types: " + std::to_string(Attr(cudaDevAttrMemoryPoolSupportedHandleTypes, d)) +
           " (bit 0: posix fd)\n";
    out += p + "vmm: " + std::to_string(DriverAttr(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, d)) +
           ", vmm posix fd export: " +
           std::to_string(DriverAttr(CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, d)) +
           ", fabric handles: " + std::to_string(DriverAttr(CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED, d)) +
           " (1 yes, 0 no, -1 unknown)\n";
    out += p + "gpudirect rdma: " + YesNo(Attr(cudaDevAttrGPUDirectRDMASupported, d)) + "\n";
    for (int e = 0; e < *count; ++e) {
      if (e == d) continue;
      int can = 0;
      cudaDeviceCanAccessPeer(&can, d, e);
      out += p + "peer access to device " + std::to_string(e) + ": " + YesNo(can) + "\n";
    }
    out += p + "mapped shared memory, kernel <-> host: " + MappedRoundTrip(d) + "\n";
  }
  return out;
}

}  // namespace tutti::cuda
