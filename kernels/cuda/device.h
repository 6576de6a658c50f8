// The CUDA runtime as tutti sees it: whether a usable device exists, and what it is. Every CUDA
// path checks DeviceCount() first, so machines without a GPU (or without a driver) get a clean
// kUnavailable rather than a crash.
#pragma once

#include <string>

#include "core/base/status.h"

namespace tutti::cuda {

// Number of usable devices; kUnavailable (with the runtime's reason) when there is none.
Result<int> DeviceCount();

struct DeviceInfo {
  std::string name;
  int major = 0, minor = 0;  // compute capability
  size_t memory_bytes = 0;
  int multiprocessors = 0;
};
Result<DeviceInfo> GetDeviceInfo(int device);

// Copies `bytes` from src to dst (both device pointers) with tutti's copy kernel (16-byte
// vector loads where alignment allows, a byte tail otherwise) and waits for it.
Status CopyOnDevice(void* dst, const void* src, size_t bytes);

}  // namespace tutti::cuda
