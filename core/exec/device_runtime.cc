#include "core/exec/device_runtime.h"

#include <atomic>

namespace tutti::exec {

namespace {
std::atomic<DeviceRuntime*> g_runtime{nullptr};
}  // namespace

DeviceRuntime* LinkedDeviceRuntime() { return g_runtime.load(std::memory_order_acquire); }

void RegisterDeviceRuntime(DeviceRuntime* runtime) { g_runtime.store(runtime, std::memory_order_release); }

Result<char*> DeviceRuntime::AllocShared(int, size_t) {
  return UnavailableError(name() + ": no shared device memory (the fused path)");
}
Result<std::string> DeviceRuntime::ShareDevice(int, char*, size_t) {
  return UnavailableError(name() + ": no shared device memory (the fused path)");
}
Result<char*> DeviceRuntime::MapShared(int, const std::string&) {
  return UnavailableError(name() + ": no shared device memory (the fused path)");
}
void DeviceRuntime::UnmapShared(int, char*) {}
bool DeviceRuntime::IsLocal(const std::string&) const { return false; }
Status DeviceRuntime::RunFused(int, const prims::RankRun&) {
  return UnavailableError(name() + ": no fused kernels");
}

}  // namespace tutti::exec
