// Inside kernels/cuda: the fused kernel as its launchers see it (prims_kernel.cu defines the
// kernel and launches n ranks' programs at once; rank_kernel.cu launches one rank's). A block
// runs one task: a schedule stream of one rank's program.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "core/base/dtype.h"
#include "core/base/status.h"
#include "kernels/prims/stream_exec.h"

namespace tutti::cuda::detail {

struct BlockTask {
  prims::ProgramView prog;
  prims::RankView view;
  uint32_t stream;
  prims::StreamState* state;
};

// The kernel: block b runs tasks[b] until its program ends, it fails, or another block failed
// (*abort_flag != 0; kCancelFlag: the host cancelled the run); a block that cannot move for
// timeout_ns fails (kTimeout). Now and then each
// block's leader writes how often it moved into progress[b] (mapped host memory), so the host
// sees a long run is alive.
constexpr int kCancelFlag = 2;
using KernelFn = void (*)(const BlockTask* tasks, int* abort_flag, uint64_t timeout_ns,
                          volatile unsigned long long* progress);

// The kernel instantiated for `type` and `op`, and the element size (InvalidArgument for an op
// the type does not take).
Status PickKernel(DataType type, RedOp op, KernelFn* kernel, size_t* elem);

Status CudaError(const char* what, cudaError_t e);

}  // namespace tutti::cuda::detail
