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
#include "kernels/prims/rank_run.h"

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

  // The fused path (core/coll/fused_path.h): collectives on device memory run by one kernel per
  // rank over FIFO connections in the receivers' device memory, for communicators whose ranks
  // share a host. Runtimes without it say kUnavailable.
  //
  virtual bool HasFused() const { return false; }
  // Zeroed memory of `device` that ShareDevice can describe (released with FreeDevice).
  virtual Result<char*> AllocShared(int device, size_t bytes);
  // A description of [p, p + bytes) (memory from AllocShared) that another process of this host
  // (or this one) turns into its own pointer with MapShared; UnmapShared releases that mapping.
  virtual Result<std::string> ShareDevice(int device, char* p, size_t bytes);
  virtual Result<char*> MapShared(int device, const std::string& shared);
  // Whether `shared` describes memory of this very process (ranks that are its threads).
  virtual bool IsLocal(const std::string& shared) const;
  virtual void UnmapShared(int device, char* p);
  // Runs one rank's lowered program on `device` (the rank kernel) and waits for it: kTimeout when
  // a stream could not move for run.timeout_s, kMismatch for a piece of the wrong size,
  // kInvalidArgument for a run CheckRankRun refuses.
  virtual Status RunFused(int device, const prims::RankRun& run);
};

// The runtime linked into this program (the CUDA one where built with CUDA), or nullptr.
DeviceRuntime* LinkedDeviceRuntime();
// Called once by a runtime's library as the program loads.
void RegisterDeviceRuntime(DeviceRuntime* runtime);

}  // namespace tutti::exec
