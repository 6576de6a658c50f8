// A device runtime for machines without a GPU: it says that memory is a device's, hands out
// "device" and "staging" memory from the host heap (poisoned, so a missing copy shows), runs
// local tasks on a worker that completes them late, and, with `fused`, runs the fused path's
// rank programs on host threads (kernels/prims/host_rank.h) over "shared device memory" that is
// ordinary memory of this process (thread ranks).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>

#include "core/exec/cpu_engine.h"
#include "core/exec/device_runtime.h"
#include "kernels/prims/host_rank.h"

namespace tutti::testing {

class HostAsDevice : public exec::DeviceRuntime {
 public:
  // all_device: every buffer is device 0's; else only memory from AllocDevice.
  explicit HostAsDevice(bool all_device, bool fused = false) : all_device_(all_device), fused_(fused) {
    engine_ = std::make_shared<exec::CpuEngine>(exec::CpuEngine::Mode::kWorker, [this](const exec::LocalTask& t) {
      if (t.kind == exec::LocalTask::Kind::kCopy) ++copies;
      int us;
      {
        std::lock_guard<std::mutex> lock(mu_);
        us = static_cast<int>(rng_() % 100);
      }
      std::this_thread::sleep_for(std::chrono::microseconds(us));
    });
  }
  // What is still allocated goes with the runtime, as a device context's memory does.
  ~HostAsDevice() override {
    for (const void* p : device_) std::free(const_cast<void*>(p));
  }
  std::string name() const override { return "host-as-device"; }
  int DeviceOf(const void* p, size_t) const override {
    if (all_device_) return 0;
    std::lock_guard<std::mutex> lock(mu_);
    return device_.count(p) ? 0 : -1;
  }
  Result<std::shared_ptr<exec::LocalEngine>> Engine(int device) override {
    if (device != 0) return InvalidArgument("no device " + std::to_string(device));
    return std::shared_ptr<exec::LocalEngine>(engine_);
  }
  char* AllocStaging(size_t bytes) override {
    ++staging_allocs;
    ++live;
    return Poisoned(bytes);
  }
  void FreeStaging(char* p) override {
    --live;
    std::free(p);
  }
  char* AllocDevice(int, size_t bytes) override {
    ++device_allocs;
    ++live;
    char* p = Poisoned(bytes);
    std::lock_guard<std::mutex> lock(mu_);
    device_.insert(p);
    return p;
  }
  void FreeDevice(int, char* p) override {
    --live;
    {
      std::lock_guard<std::mutex> lock(mu_);
      device_.erase(p);
    }
    std::free(p);
  }

  bool HasFused() const override { return fused_; }
  Result<char*> AllocShared(int device, size_t bytes) override {
    char* p = AllocDevice(device, bytes);
    if (p == nullptr) return UnavailableError("host-as-device: out of memory");
    std::memset(p, 0, bytes);
    return p;
  }
  Result<std::string> ShareDevice(int, char* p, size_t) override {
    return std::to_string(reinterpret_cast<uintptr_t>(p));
  }
  Result<char*> MapShared(int, const std::string& shared) override {
    if (refuse_maps.load() > 0 && refuse_maps.fetch_sub(1) > 0) {
      return UnavailableError("host-as-device: no peer access (as told)");
    }
    ++maps;
    return reinterpret_cast<char*>(static_cast<uintptr_t>(std::stoull(shared)));
  }
  bool IsLocal(const std::string&) const override { return true; }
  Status RunFused(int, const prims::RankRun& run) override {
    ++fused_runs;
    return prims::RunHostRank(run);
  }

  std::atomic<int> staging_allocs{0}, device_allocs{0}, live{0}, copies{0}, maps{0}, fused_runs{0};
  std::atomic<int> refuse_maps{0};  // MapShared fails this many times (GPUs without peer access)

 private:
  static char* Poisoned(size_t bytes) {
    char* p = static_cast<char*>(std::malloc(bytes));
    if (p != nullptr) std::memset(p, 0xA5, bytes);
    return p;
  }
  const bool all_device_;
  const bool fused_;
  mutable std::mutex mu_;
  std::mt19937 rng_{11};
  std::set<const void*> device_;
  std::shared_ptr<exec::CpuEngine> engine_;
};

}  // namespace tutti::testing
