#include "core/mem/mem_kind.h"

#include <dlfcn.h>

namespace tutti {

const char* MemKindName(MemKind k) {
  switch (k) {
    case MemKind::kHost: return "host";
    case MemKind::kPinnedHost: return "pinned host";
    case MemKind::kCudaDevice: return "cuda device";
    case MemKind::kCudaManaged: return "cuda managed";
  }
  return "?";
}

std::string Describe(const MemInfo& m) {
  std::string s = MemKindName(m.kind);
  if (m.device >= 0) s += " " + std::to_string(m.device);
  return s;
}

namespace {

class HostOnly : public MemoryProbe {
 public:
  MemInfo Probe(const void*) const override { return {}; }
  bool knows_devices() const override { return false; }
};

// The CUDA driver API, declared here with the values its documentation gives (no CUDA headers
// needed to build; the library is opened at run time).
using CuResult = int;
using CuDevicePtr = unsigned long long;
constexpr int kAttrMemoryType = 2;     // CU_POINTER_ATTRIBUTE_MEMORY_TYPE -> unsigned int
constexpr int kAttrIsManaged = 8;      // CU_POINTER_ATTRIBUTE_IS_MANAGED -> unsigned int (bool)
constexpr int kAttrDeviceOrdinal = 9;  // CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL -> int
constexpr int kAttrBufferId = 7;       // CU_POINTER_ATTRIBUTE_BUFFER_ID -> unsigned long long
constexpr unsigned kMemTypeHost = 1, kMemTypeDevice = 2, kMemTypeUnified = 4;

class CudaDriverProbe : public MemoryProbe {
 public:
  static std::unique_ptr<MemoryProbe> Open() {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) return nullptr;
    auto init = reinterpret_cast<CuResult (*)(unsigned)>(dlsym(lib, "cuInit"));
    auto attr = reinterpret_cast<CuResult (*)(void*, int, CuDevicePtr)>(dlsym(lib, "cuPointerGetAttribute"));
    if (init == nullptr || attr == nullptr || init(0) != 0) {  // no device, no driver that works
      dlclose(lib);
      return nullptr;
    }
    return std::unique_ptr<MemoryProbe>(new CudaDriverProbe(attr));  // the library stays loaded
  }

  MemInfo Probe(const void* p) const override {
    MemInfo m;
    const CuDevicePtr ptr = reinterpret_cast<CuDevicePtr>(p);
    unsigned type = 0;
    if (p == nullptr || attr_(&type, kAttrMemoryType, ptr) != 0) return m;  // unknown to CUDA: pageable
    unsigned managed = 0;
    attr_(&managed, kAttrIsManaged, ptr);
    unsigned long long id = 0;
    if (attr_(&id, kAttrBufferId, ptr) == 0) m.buffer_id = id;
    if (managed || type == kMemTypeUnified) {
      m.kind = MemKind::kCudaManaged;
    } else if (type == kMemTypeDevice) {
      m.kind = MemKind::kCudaDevice;
    } else if (type == kMemTypeHost) {
      m.kind = MemKind::kPinnedHost;
    }
    if (m.kind != MemKind::kPinnedHost) {
      int dev = -1;
      if (attr_(&dev, kAttrDeviceOrdinal, ptr) == 0) m.device = dev;
    }
    return m;
  }
  bool knows_devices() const override { return true; }

 private:
  explicit CudaDriverProbe(CuResult (*attr)(void*, int, CuDevicePtr)) : attr_(attr) {}
  CuResult (*attr_)(void*, int, CuDevicePtr);
};

}  // namespace

std::unique_ptr<MemoryProbe> HostOnlyProbe() { return std::make_unique<HostOnly>(); }

const MemoryProbe& SystemMemoryProbe() {
  static const MemoryProbe* probe = [] {
    std::unique_ptr<MemoryProbe> p = CudaDriverProbe::Open();
    if (!p) p = HostOnlyProbe();
    return p.release();  // lives as long as the process
  }();
  return *probe;
}

}  // namespace tutti
