// Test support: runs one collective's schedules for every rank through the lowering and the host
// world, and compares every rank's output bit for bit with what the schedule simulator says the
// unfused schedules compute (each reduction node widened, combined left to right, narrowed once,
// as the CPU kernels do).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "algorithms/lowering.h"
#include "algorithms/schedule.h"
#include "core/base/dtype.h"
#include "core/base/status.h"
#include "kernels/prims/host_world.h"

namespace tutti::prims {

struct WorldCheck {
  std::string algorithm = "ring";
  algo::CollArgs args;  // args.rank ignored
  DataType type = DataType::kFloat32;
  RedOp op = RedOp::kSum;
  algo::LowerOptions lower;
  HostWorldOptions world;
  // What runs the programs: RunHostWorld when empty; the GPU check passes the device kernel
  // (host buffers in and out, as RunHostWorld takes them).
  std::function<Status(DataType, RedOp, const std::vector<algo::PrimProgram>&, const std::vector<HostRankBuffers>&,
                       const HostWorldOptions&)>
      run;
};

// OK when every rank's output equals the simulator's bit for bit; otherwise the first difference
// (rank, element, both values) or the failure of lowering / running. `fused_locals` and
// `early_sends` (optional) receive the lowering's totals over all ranks.
Status RunWorldCheck(const WorldCheck& check, uint64_t* fused_locals = nullptr, uint64_t* early_sends = nullptr);

}  // namespace tutti::prims
