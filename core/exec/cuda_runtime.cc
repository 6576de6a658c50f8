// The CUDA runtime behind DeviceRuntime, registered as the program loads (alwayslink).
#include <cuda_runtime.h>

#include <map>
#include <mutex>

#include "core/exec/cuda_engine.h"
#include "core/exec/device_runtime.h"
#include "core/mem/mem_kind.h"

namespace tutti::exec {
namespace {

class CudaRuntime : public DeviceRuntime {
 public:
  std::string name() const override { return "cuda"; }

  // The driver's answer (core/mem), which costs nothing where no driver loads and does not
  // create a CUDA context for host buffers.
  int DeviceOf(const void* p, size_t) const override {
    if (p == nullptr) return -1;
    const MemInfo m = SystemMemoryProbe().Probe(p);
    return m.kind == MemKind::kCudaDevice ? m.device : -1;
  }

  Result<std::shared_ptr<LocalEngine>> Engine(int device) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = engines_.find(device);
    if (it != engines_.end()) return it->second;
    TUTTI_ASSIGN_OR_RETURN(std::unique_ptr<CudaEngine> e, CudaEngine::Create(device));
    std::shared_ptr<LocalEngine> shared = std::move(e);
    engines_.emplace(device, shared);
    return shared;
  }

  char* AllocStaging(size_t bytes) override {
    void* p = nullptr;
    if (cudaHostAlloc(&p, bytes, cudaHostAllocPortable) != cudaSuccess) {
      cudaGetLastError();
      return nullptr;
    }
    return static_cast<char*>(p);
  }
  void FreeStaging(char* p) override { cudaFreeHost(p); }

  char* AllocDevice(int device, size_t bytes) override {
    void* p = nullptr;
    if (cudaSetDevice(device) != cudaSuccess || cudaMalloc(&p, bytes) != cudaSuccess) {
      cudaGetLastError();
      return nullptr;
    }
    return static_cast<char*>(p);
  }
  void FreeDevice(int device, char* p) override {
    cudaSetDevice(device);
    cudaFree(p);
  }

 private:
  std::mutex mu_;
  std::map<int, std::shared_ptr<LocalEngine>> engines_;
};

// Lives for the whole program (engines hold streams that must not be destroyed after the
// CUDA runtime has shut down at exit).
const bool kRegistered = [] {
  RegisterDeviceRuntime(new CudaRuntime());
  return true;
}();

}  // namespace
}  // namespace tutti::exec
