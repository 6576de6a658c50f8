// The fused collective kernel on one GPU: every rank's lowered program (algorithms/lowering.h) in
// one launch, a thread block per (rank, schedule stream) running the device primitives of
// kernels/prims (the very source the host world runs), FIFO connections and LL staging in device
// memory. This is how one GPU runs n ranks (the GPU check, single-GPU machines): blocks stand in
// for the ranks' kernels, which on several GPUs reach each other through CUDA IPC mappings.
//
// All blocks must be resident at once (they spin on each other's flags): a launch that the
// device cannot hold at once is refused (kUnavailable) rather than left to hang.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "algorithms/prim_program.h"
#include "core/base/dtype.h"
#include "core/base/status.h"
#include "kernels/prims/fifo.h"

namespace tutti::cuda {

struct DeviceRankBuffers {
  void* input = nullptr;  // device pointers
  void* output = nullptr;
  void* scratch = nullptr;  // program.scratch_count elements
  // Their sizes in bytes: when any is non-zero, programs reaching outside them are refused
  // (InvalidArgument); all 0: unknown, the programs are trusted.
  size_t input_bytes = 0, output_bytes = 0, scratch_bytes = 0;
};

// The kernel is compiled for blocks of at most this many threads (__launch_bounds__), which
// leaves it up to 128 registers a thread; 1024 threads would cap it at 64 and spill.
inline constexpr int kMaxBlockThreads = 512;

struct DeviceWorldOptions {
  prims::FifoGeom geom;
  uint64_t counter_base = 0;  // as HostWorldOptions::counter_base (LL flag wrap-around)
  int threads = 256;          // per block: a multiple of 32, at most kMaxBlockThreads
  // A block that cannot move for this long fails (kTimeout, naming what it waits for); the
  // others then stop (kAborted). The host waits for the kernel twice as long, plus 5 s.
  double timeout_s = 10;
};

// The same, set up once and launched many times (benchmarks; a communicator's repeated calls):
// connections keep their counters from one launch to the next, so a launch costs one small
// memset and the kernel.
class DeviceWorld {
 public:
  // Checks and copies everything to the device; the buffers must outlive the world.
  static Result<std::unique_ptr<DeviceWorld>> Create(DataType type, RedOp op,
                                                     const std::vector<algo::PrimProgram>& programs,
                                                     const std::vector<DeviceRankBuffers>& buffers,
                                                     const DeviceWorldOptions& options);
  ~DeviceWorld();
  DeviceWorld(const DeviceWorld&) = delete;
  DeviceWorld& operator=(const DeviceWorld&) = delete;

  // Enqueues one run of every program on `stream` (a cudaStream_t; nullptr: the legacy default
  // stream). Runs must not overlap: wait for one before the next is launched on another stream.
  Status Launch(void* stream);
  // Waits for the last launch and reports its failures, including pieces sent that nobody
  // received (kMismatch). After a failure the world refuses further launches (its connections
  // may hold stale pieces). The host gives up on a kernel whose blocks made no progress for twice
  // the timeout plus 5 s (the blocks time out by themselves before that).
  Status Wait();

  // Bytes of device memory every run reads and writes (sources, destinations, slots), for the
  // memory-traffic bound of a benchmark.
  uint64_t TrafficBytes() const { return traffic_; }

  struct Impl;  // (prims_kernel.cu)

 private:
  explicit DeviceWorld(std::unique_ptr<Impl> impl);
  Status WaitRun();
  std::unique_ptr<Impl> impl_;
  uint64_t traffic_ = 0;
};

// Runs programs[r] as rank r on the current device, reductions with `op` on `type`, and waits.
// Errors as RunHostWorld's: a piece of the wrong size (kMismatch), a timeout, malformed programs
// or geometry (kInvalidArgument), no device (kUnavailable).
Status RunDeviceWorld(DataType type, RedOp op, const std::vector<algo::PrimProgram>& programs,
                      const std::vector<DeviceRankBuffers>& buffers, const DeviceWorldOptions& options);

}  // namespace tutti::cuda
