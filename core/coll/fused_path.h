// The fused path: collectives on device memory of communicators whose ranks share a host, run
// by one kernel per rank (kernels/cuda/prims_kernel.h; the runtime's RunFused) that streams the
// lowered schedule (algorithms/lowering.h) through FIFO connections, with no host staging and
// no CPU thread per step. Each rank allocates the receiving ends of its connections in its
// device memory (a protocol x stream x peer table, zeroed), shares them through the store
// (CUDA IPC handles; the same pointer for ranks that are threads of one process), and maps its
// peers'. The connections' counters carry on from call to call.
//
// Ranks that are threads of one process on one device (tests, single-GPU machines) meet before
// each launch, so that no rank allocates device memory while a peer's kernel waits for it.
//
// Small calls take the LL protocol (data and flag in one 8-byte store, no fence), larger ones
// Simple (slots and a counter). After a failed call (a timeout, a mismatch) the connections may
// hold stale pieces: the path refuses every later call, naming the failure.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "algorithms/prim_program.h"
#include "core/base/status.h"
#include "core/exec/device_runtime.h"
#include "core/store/store.h"
#include "kernels/prims/fifo.h"

namespace tutti {

struct FusedConfig {
  bool enabled = true;            // TUTTI_FUSED (0: device memory goes the staged path)
  uint64_t ll_max_bytes = 16384;  // TUTTI_FUSED_LL_MAX: calls up to this many bytes take LL
  // Connections per pair of ranks and protocol: programs with more streams (channels) than
  // this go the staged path.
  uint32_t streams = 8;
  prims::FifoGeom ll{8, 4096, prims::Proto::kLL};
  prims::FifoGeom simple{4, 65536, prims::Proto::kSimple};
  // Channels (thread blocks per rank) of a fused call that does not ask for a number, unless
  // TUTTI_NCHANNELS is set: one block cannot draw the device's memory bandwidth.
  bool auto_channels = true;
  int ChannelsFor(uint64_t call_bytes) const {
    const int c = call_bytes >= (4u << 20) ? 8 : call_bytes >= (512u << 10) ? 4 : call_bytes >= (64u << 10) ? 2 : 1;
    return std::min<int>(c, static_cast<int>(streams));
  }
};

class FusedPath {
 public:
  // `store`: the communicator's; keys under "fused/".
  FusedPath(exec::DeviceRuntime* runtime, std::shared_ptr<Store> store, int rank, int size, FusedConfig config);
  ~FusedPath();
  FusedPath(const FusedPath&) = delete;
  FusedPath& operator=(const FusedPath&) = delete;

  const FusedConfig& config() const { return cfg_; }

  // Whether calls on `device` take the path: sets the connections up at the first call (every
  // rank's first call on device memory must come within timeout_s); false on every rank when
  // some rank cannot map a peer's memory (GPUs without peer access), said once in the log.
  Result<bool> Usable(int device, double timeout_s);

  // Runs this rank's `program` on `device` and waits: buffers (input, output, scratch) with
  // their sizes, reductions with `op` (not avg / premul_sum: the caller scales and divides).
  // `call_bytes` picks the protocol (the same on every rank). `tag` travels with every piece and
  // must be what the peers give for the same call (kernels/prims/fifo.h): the communicator's
  // call trail, so that a rank that made another call fails with kMismatch, naming the peer,
  // instead of combining pieces of two calls. `cancelled` (may be empty), asked now and then
  // while the run waits, stops it with kAborted (the communicator failed: the peers will not
  // come). The first call on a device sets the connections up (every rank's first call must
  // come within timeout_s).
  Status Run(int device, const algo::PrimProgram& program, DataType type, RedOp op, uint8_t* const bufs[3],
             const uint64_t bytes[3], uint64_t call_bytes, uint32_t tag, double timeout_s,
             std::function<bool()> cancelled = {});

 private:
  struct Area;
  class LocalBarrier;
  Result<Area*> AreaFor(int device, double timeout_s);
  Status Setup(int device, Area* a, double timeout_s);

  exec::DeviceRuntime* rt_;
  std::shared_ptr<Store> store_;
  int rank_, size_;
  FusedConfig cfg_;
  std::mutex mu_;  // calls are issued one at a time (the communicator's issue claim); this guards setup
  std::map<int, std::unique_ptr<Area>> areas_;
  int setups_ = 0;
  std::string broken_;
};

// TUTTI_FUSED, TUTTI_FUSED_LL_MAX.
Result<FusedConfig> FusedConfigFromEnv();

}  // namespace tutti
