// What a machine's GPUs can do for the collectives' transports, probed at run time: the device,
// the attributes CUDA IPC (legacy handles, VMM allocations exported as POSIX file descriptors),
// mapped host memory and GPUDirect RDMA depend on, peer access between every pair of devices,
// and a functional check that a kernel and the host exchange flags through page-locked shared
// memory (the path FIFOs in host memory take: a kernel writes, the host polls, and back).
#pragma once

#include <string>

#include "core/base/status.h"

namespace tutti::cuda {

// A report, one fact per line ("device 0: NVIDIA H200, cc 9.0, 132 SMs, 139.8 GiB", "ipc events:
// yes", "mapped shared memory round trip: 1000 flags in 3.1 ms"). kUnavailable without a device.
Result<std::string> ProbeDevices();

}  // namespace tutti::cuda
