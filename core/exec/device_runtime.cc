#include "core/exec/device_runtime.h"

#include <atomic>

namespace tutti::exec {

namespace {
std::atomic<DeviceRuntime*> g_runtime{nullptr};
}  // namespace

DeviceRuntime* LinkedDeviceRuntime() { return g_runtime.load(std::memory_order_acquire); }

void RegisterDeviceRuntime(DeviceRuntime* runtime) { g_runtime.store(runtime, std::memory_order_release); }

}  // namespace tutti::exec
