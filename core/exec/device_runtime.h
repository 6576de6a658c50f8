// A GPU runtime as the communicator uses it for collectives on device memory: which device a
// buffer lives on, the local engine of each device, page-locked host memory for staging and
// device memory for scratch. The CUDA runtime (cuda_runtime.cc) registers itself when it is
// linked in (where the toolkit exists); tests substitute a stand-in that treats host memory as
// a device's, so the whole device path (staging, posted copies, pools) runs on machines
// without a GPU.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "core/exec/local_engine.h"

namespace tutti::exec {

class DeviceRuntime {
 public:
  virtual ~DeviceRuntime() = default;
  virtual std::string name() const = 0;
  // The device [p, p + bytes) lives on, or -1 for memory the CPU reads and writes directly
  // (pageable, pinned or managed host memory).
  virtual int DeviceOf(const void* p, size_t bytes) const = 0;
  // The engine of `device`, shared by every caller (one stream per device).
  virtual Result<std::shared_ptr<LocalEngine>> Engine(int device) = 0;
  // Page-locked host memory (nullptr when it cannot be had) and its release.
  virtual char* AllocStaging(size_t bytes) = 0;
  virtual void FreeStaging(char* p) = 0;
  // Memory of `device` (nullptr when it cannot be had) and its release.
  virtual char* AllocDevice(int device, size_t bytes) = 0;
  virtual void FreeDevice(int device, char* p) = 0;
};

// The runtime linked into this program (the CUDA one where built with CUDA), or nullptr.
DeviceRuntime* LinkedDeviceRuntime();
// Called once by a runtime's library as the program loads.
void RegisterDeviceRuntime(DeviceRuntime* runtime);

}  // namespace tutti::exec
