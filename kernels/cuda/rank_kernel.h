// One rank's part of a communicator's fused collectives on its device, call after call
// (prims::RankRun: its program, buffers and its ends of connections its peers reach): the
// program's streams as the blocks of one launch of the fused kernel, on a stream of its own, so
// that ranks that are threads of one process run side by side.
//
// Nothing is freed between calls: a cudaFree waits for every kernel on the device, and a peer's
// kernel may be waiting for this rank's next call. Memory for the program grows as needed and is
// released with the RankKernel (destroy it only when no peer is in a call with this rank).
#pragma once

#include <memory>

#include "core/base/status.h"
#include "kernels/prims/rank_run.h"

namespace tutti::cuda {

class RankKernel {
 public:
  // On `device` (made current for the calling thread), blocks of `threads` threads.
  static Result<std::unique_ptr<RankKernel>> Create(int device, int threads = 256);
  ~RankKernel();
  RankKernel(const RankKernel&) = delete;
  RankKernel& operator=(const RankKernel&) = delete;

  // Runs `run` and waits. Errors name the rank, stream, step and peer: a piece of the wrong size
  // (kMismatch), a stream that could not move for run.timeout_s (kTimeout), a run CheckRankRun
  // refuses (kInvalidArgument), more blocks than the device holds at once (kUnavailable). The
  // host gives up on a kernel whose blocks stopped moving for twice the timeout and 5 s more
  // (kTimeout; its memory is then never freed, the device may still run it).
  Status Run(const prims::RankRun& run);

 private:
  struct Impl;
  explicit RankKernel(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tutti::cuda
