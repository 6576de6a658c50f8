#include "core/coll/device_path.h"

#include "core/mem/mem_kind.h"

namespace tutti {

DevicePath::DevicePath(std::shared_ptr<exec::DeviceRuntime> substitute)
    : substitute_(std::move(substitute)),
      rt_(substitute_ ? substitute_.get() : exec::LinkedDeviceRuntime()),
      probe_(substitute_ != nullptr || (rt_ != nullptr && SystemMemoryProbe().knows_devices())) {}

bool DevicePath::DriverPresent() { return SystemMemoryProbe().knows_devices(); }

int DevicePath::DeviceOf(const void* p, size_t bytes) const {
  if (!probe_ || p == nullptr) return -1;
  return rt_->DeviceOf(p, bytes);
}

Result<std::shared_ptr<exec::LocalEngine>> DevicePath::Engine(int device) {
  if (rt_ == nullptr) return UnavailableError("no device runtime in this program");
  return rt_->Engine(device);
}

Result<std::shared_ptr<char>> DevicePath::Staging(size_t bytes) {
  if (rt_ == nullptr) return UnavailableError("no device runtime in this program");
  std::shared_ptr<BufferPool> pool;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!staging_) {
      BufferAllocator a;
      auto keep = substitute_;
      exec::DeviceRuntime* rt = rt_;
      a.alloc = [rt, keep](size_t n) { return rt->AllocStaging(n); };
      a.free = [rt, keep](char* p) { rt->FreeStaging(p); };
      a.what = "page-locked staging memory (" + rt_->name() + ")";
      a.free_in_background = true;
      staging_ = std::make_shared<BufferPool>(BufferPool::kMaxIdle, std::move(a));
    }
    pool = staging_;
  }
  return pool->Get(bytes);
}

Result<std::shared_ptr<char>> DevicePath::DeviceBuffer(int device, size_t bytes) {
  if (rt_ == nullptr) return UnavailableError("no device runtime in this program");
  std::shared_ptr<BufferPool> pool;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto& slot = device_pools_[device];
    if (!slot) {
      BufferAllocator a;
      auto keep = substitute_;
      exec::DeviceRuntime* rt = rt_;
      a.alloc = [rt, keep, device](size_t n) { return rt->AllocDevice(device, n); };
      a.free = [rt, keep, device](char* p) { rt->FreeDevice(device, p); };
      a.what = "memory of " + rt_->name() + " device " + std::to_string(device);
      a.free_in_background = true;
      slot = std::make_shared<BufferPool>(BufferPool::kMaxIdle, std::move(a));
    }
    pool = slot;
  }
  return pool->Get(bytes);
}

void DevicePath::TrimIdle() {
  // The pools are trimmed outside mu_: releasing CUDA memory can wait a long time (for every
  // kernel on the device), and a call must not wait for it to get its buffers.
  std::vector<std::shared_ptr<BufferPool>> pools;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (staging_) pools.push_back(staging_);
    for (auto& [device, pool] : device_pools_) pools.push_back(pool);
  }
  for (auto& pool : pools) pool->TrimIdle();
}

}  // namespace tutti
