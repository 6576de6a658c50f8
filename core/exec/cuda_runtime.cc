// The CUDA runtime behind DeviceRuntime, registered as the program loads (alwayslink).
#include <cuda_runtime.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <sstream>

#include "core/exec/cuda_engine.h"
#include "core/exec/device_runtime.h"
#include "core/mem/mem_kind.h"
#include "kernels/cuda/rank_kernel.h"

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

  // The fused path: connections in device memory shared through CUDA IPC handles; ranks that are
  // threads of this process use the pointer itself (a process cannot open its own handles).
  bool HasFused() const override { return true; }

  Result<char*> AllocShared(int device, size_t bytes) override {
    char* p = AllocDevice(device, bytes);
    if (p == nullptr) return UnavailableError("cudaMalloc of " + std::to_string(bytes) + " bytes on device " + std::to_string(device));
    // On a stream of its own: a device-wide synchronisation could wait for peers' kernels.
    cudaStream_t s = nullptr;
    cudaError_t e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    if (e == cudaSuccess) e = cudaMemsetAsync(p, 0, bytes, s);
    if (e == cudaSuccess) e = cudaStreamSynchronize(s);
    if (s != nullptr) cudaStreamDestroy(s);
    if (e != cudaSuccess) {
      cudaGetLastError();
      FreeDevice(device, p);
      return UnavailableError(std::string("clearing shared device memory: ") + cudaGetErrorString(e));
    }
    return p;
  }

  // "<process token> <pointer> <IPC handle in hex, or ->".
  Result<std::string> ShareDevice(int device, char* p, size_t) override {
    cudaSetDevice(device);
    std::ostringstream out;
    out << Token() << " " << reinterpret_cast<uintptr_t>(p) << " ";
    cudaIpcMemHandle_t h;
    if (cudaIpcGetMemHandle(&h, p) == cudaSuccess) {
      const auto* b = reinterpret_cast<const unsigned char*>(&h);
      char hex[3];
      for (size_t i = 0; i < sizeof h; ++i) {
        std::snprintf(hex, sizeof hex, "%02x", b[i]);
        out << hex;
      }
    } else {
      cudaGetLastError();
      out << "-";
    }
    return out.str();
  }

  Result<char*> MapShared(int device, const std::string& shared) override {
    std::istringstream in(shared);
    uint64_t token = 0;
    uintptr_t ptr = 0;
    std::string hex;
    if (!(in >> token >> ptr >> hex)) return InvalidArgument("malformed shared device memory: '" + shared + "'");
    if (token == Token()) return reinterpret_cast<char*>(ptr);
    cudaIpcMemHandle_t h;
    if (hex.size() != 2 * sizeof h) {
      return UnavailableError("the peer could not export its device memory (cudaIpcGetMemHandle failed there)");
    }
    auto* b = reinterpret_cast<unsigned char*>(&h);
    auto nibble = [](char c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1; };
    for (size_t i = 0; i < sizeof h; ++i) {
      const int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
      if (hi < 0 || lo < 0) return InvalidArgument("malformed IPC handle in shared device memory: '" + shared + "'");
      b[i] = static_cast<unsigned char>(hi * 16 + lo);
    }
    cudaSetDevice(device);
    void* p = nullptr;
    if (cudaError_t e = cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess); e != cudaSuccess) {
      cudaGetLastError();
      return UnavailableError(std::string("cudaIpcOpenMemHandle: ") + cudaGetErrorString(e));
    }
    std::lock_guard<std::mutex> lock(mu_);
    opened_.insert(p);
    return static_cast<char*>(p);
  }

  bool IsLocal(const std::string& shared) const override {
    std::istringstream in(shared);
    uint64_t token = 0;
    return (in >> token) && token == Token();
  }

  void UnmapShared(int device, char* p) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (opened_.erase(p) == 0) return;
    cudaSetDevice(device);
    cudaIpcCloseMemHandle(p);
  }

  Status RunFused(int device, const prims::RankRun& run) override {
    // One rank kernel per calling thread and device: a communicator's calls come from one thread
    // at a time, and ranks that are threads of this process each have their own.
    thread_local std::map<int, std::unique_ptr<cuda::RankKernel>> kernels;
    auto it = kernels.find(device);
    if (it == kernels.end()) {
      TUTTI_ASSIGN_OR_RETURN(std::unique_ptr<cuda::RankKernel> k, cuda::RankKernel::Create(device));
      it = kernels.emplace(device, std::move(k)).first;
    }
    return it->second->Run(run);
  }

 private:
  // Tells this process from every other, in any PID namespace, and from a child forked after
  // it was first asked (the pid is mixed in at every call).
  static uint64_t Token() {
    static const uint64_t base = [] {
      std::random_device rd;
      return (static_cast<uint64_t>(rd()) << 32) ^ rd();
    }();
    return base ^ (static_cast<uint64_t>(getpid()) * 0x9E3779B97F4A7C15ull);
  }

  std::mutex mu_;
  std::map<int, std::shared_ptr<LocalEngine>> engines_;
  std::set<void*> opened_;
};

// Lives for the whole program (engines hold streams that must not be destroyed after the
// CUDA runtime has shut down at exit).
const bool kRegistered = [] {
  RegisterDeviceRuntime(new CudaRuntime());
  return true;
}();

}  // namespace
}  // namespace tutti::exec
