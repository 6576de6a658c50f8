// What a communicator needs for collectives on device memory: the device runtime (the linked
// CUDA one, or a substitute given in CommOptions), where a buffer lives, each device's local
// engine, and pools of page-locked staging memory and device scratch memory (reused across
// calls, released when idle, as the host scratch pool).
#pragma once

#include <map>
#include <memory>
#include <mutex>

#include "core/coll/buffer_pool.h"
#include "core/exec/device_runtime.h"

namespace tutti {

class DevicePath {
 public:
  // `substitute`: a runtime to use instead of the linked one (tests); null for the linked one.
  explicit DevicePath(std::shared_ptr<exec::DeviceRuntime> substitute);

  // Whether a CUDA driver loads here (else every pointer is host memory and nothing needs
  // checking).
  static bool DriverPresent();
  // The runtime calls use, or null when this program has none.
  exec::DeviceRuntime* runtime() const { return rt_; }
  // The device [p, p + bytes) lives on, or -1 for host memory (always -1 without a runtime,
  // and without asking anyone where no CUDA driver loads).
  int DeviceOf(const void* p, size_t bytes) const;
  Result<std::shared_ptr<exec::LocalEngine>> Engine(int device);
  Result<std::shared_ptr<char>> Staging(size_t bytes);
  Result<std::shared_ptr<char>> DeviceBuffer(int device, size_t bytes);
  // Releases pooled memory idle for a while (the progress thread calls it).
  void TrimIdle();

 private:
  std::shared_ptr<exec::DeviceRuntime> substitute_;
  exec::DeviceRuntime* rt_;
  bool probe_;  // whether DeviceOf asks the runtime at all
  std::mutex mu_;
  std::shared_ptr<BufferPool> staging_;
  std::map<int, std::shared_ptr<BufferPool>> device_pools_;
};

}  // namespace tutti
