// The probe: attributes through the runtime (and the driver's cuDeviceGetAttribute, reached
// through the runtime's entry-point query, so nothing links libcuda directly), and a ping-pong
// between a kernel and this thread over a shared anonymous mapping registered with CUDA, and
// between two blocks of one kernel through device memory with each way of publishing a flag.
#include "kernels/cuda/probe.h"

#include <cuda.h>
#include <cuda_runtime.h>
#include <sys/mman.h>

#include <cuda/atomic>

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

// Two blocks of one kernel on one device bounce a counter through device memory: block 0 writes
// flags[0] = i and waits for flags[1] == i, block 1 answers. How a flag is published and read is
// what a FIFO connection pays per piece: mode 0 plain volatile stores and loads, 1 release/acquire
// at GPU scope, 2 release/acquire at system scope, 3 a system fence before a volatile store.
// Thread 0 of each block signals; the block's other threads wait at a barrier, as a team does.
__device__ void Publish(unsigned long long* f, unsigned long long v, int mode) {
  if (mode == 1) {
    ::cuda::atomic_ref<unsigned long long, ::cuda::thread_scope_device>(*f).store(v, ::cuda::memory_order_release);
  } else if (mode == 2) {
    ::cuda::atomic_ref<unsigned long long, ::cuda::thread_scope_system>(*f).store(v, ::cuda::memory_order_release);
  } else {
    if (mode == 3) __threadfence_system();
    *reinterpret_cast<volatile unsigned long long*>(f) = v;
  }
}
__device__ unsigned long long Observe(unsigned long long* f, int mode) {
  if (mode == 1) return ::cuda::atomic_ref<unsigned long long, ::cuda::thread_scope_device>(*f).load(::cuda::memory_order_acquire);
  if (mode == 2) return ::cuda::atomic_ref<unsigned long long, ::cuda::thread_scope_system>(*f).load(::cuda::memory_order_acquire);
  return *reinterpret_cast<volatile unsigned long long*>(f);
}
__global__ void BlockPingPong(unsigned long long* flags, unsigned long long rounds, int mode, unsigned long long* ns) {
  const int me = blockIdx.x;
  unsigned long long t0 = 0, t1 = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  for (unsigned long long i = 1; i <= rounds; ++i) {
    if (threadIdx.x == 0) {
      if (me == 0) Publish(&flags[0], i, mode);
      unsigned long long spins = 0;
      while (Observe(&flags[me == 0 ? 1 : 0], mode) < i) {
        if (++spins > (1ull << 30)) break;  // never hang the probe
      }
      if (me == 1) Publish(&flags[1], i, mode);
    }
    __syncthreads();
  }
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
  if (me == 0 && threadIdx.x == 0) *ns = t1 - t0;
}

// "volatile 0.71 us, gpu-scope 0.80 us, ..." per round trip, or what failed.
std::string BlockRoundTrips(int device) {
  cudaSetDevice(device);
  unsigned long long* mem = nullptr;
  if (cudaError_t e = cudaMalloc(&mem, 4 * sizeof(unsigned long long)); e != cudaSuccess) {
    return std::string("cudaMalloc: ") + cudaGetErrorString(e);
  }
  const char* names[] = {"volatile", "gpu-scope release/acquire", "system-scope release/acquire",
                         "system fence + volatile"};
  const unsigned long long rounds = 2000;
  std::string out;
  for (int mode = 0; mode < 4; ++mode) {
    cudaMemset(mem, 0, 4 * sizeof(unsigned long long));
    BlockPingPong<<<2, 256>>>(mem, rounds, mode, mem + 2);
    unsigned long long ns = 0;
    cudaError_t e = cudaDeviceSynchronize();
    if (e == cudaSuccess) e = cudaMemcpy(&ns, mem + 2, sizeof ns, cudaMemcpyDeviceToHost);
    char line[96];
    if (e != cudaSuccess) {
      std::snprintf(line, sizeof line, "%s: %s", names[mode], cudaGetErrorString(e));
    } else {
      std::snprintf(line, sizeof line, "%s %.2f us", names[mode], ns * 1e-3 / rounds);
    }
    out += (mode ? ", " : "") + std::string(line);
  }
  cudaFree(mem);
  return out;
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
  flags[0] = 0;
  flags[1] = 0;
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
    out += p + "block <-> block round trip in device memory: " + BlockRoundTrips(d) + "\n";
  }
  return out;
}

}  // namespace tutti::cuda
