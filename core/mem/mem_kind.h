// What kind of memory a pointer points to: pageable host, pinned host, CUDA device or CUDA
// managed memory, and on which device. The data plane decides with it how a buffer can be read
// and written (CPU kernels, CUDA kernels, staging, IPC, RDMA).
//
// Detection asks the CUDA driver (cuPointerGetAttribute, loaded at run time from libcuda.so.1)
// where one is installed and initialises; elsewhere every pointer is host memory and asking
// costs nothing. It costs a driver call where CUDA exists: callers cache the answer per buffer
// (RegistrationCache) instead of asking per message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace tutti {

enum class MemKind : uint8_t {
  kHost,         // pageable host memory
  kPinnedHost,   // page-locked host memory known to CUDA (cudaHostAlloc / cudaHostRegister)
  kCudaDevice,   // device memory (cudaMalloc, cuMemAlloc, cuMem VMM)
  kCudaManaged,  // managed memory (cudaMallocManaged): reachable from host and device
};
const char* MemKindName(MemKind k);

struct MemInfo {
  MemKind kind = MemKind::kHost;
  int device = -1;         // CUDA device ordinal for device/managed memory, else -1
  uint64_t buffer_id = 0;  // the driver's id of the allocation (0 if none): a freed and
                           // reallocated range gets a new one, so cached facts can be checked
  bool host_accessible() const { return kind != MemKind::kCudaDevice; }
  bool operator==(const MemInfo& o) const {
    return kind == o.kind && device == o.device && buffer_id == o.buffer_id;
  }
};
std::string Describe(const MemInfo& m);  // "host", "cuda device 1", ...

// Answers what a pointer is. Tests substitute their own.
class MemoryProbe {
 public:
  virtual ~MemoryProbe() = default;
  virtual MemInfo Probe(const void* p) const = 0;
  // False where every answer is kHost (no CUDA driver): callers may skip probing altogether.
  virtual bool knows_devices() const = 0;
};

// The process's probe: the CUDA driver's answer where a driver loads and initialises, else
// "host" for everything. Created once, on first use; thread-safe.
const MemoryProbe& SystemMemoryProbe();

// A probe that knows no devices (every pointer is host memory).
std::unique_ptr<MemoryProbe> HostOnlyProbe();

}  // namespace tutti
