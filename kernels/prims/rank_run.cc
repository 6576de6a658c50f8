#include "kernels/prims/rank_run.h"

#include <array>
#include <string>

#include "kernels/prims/report.h"

namespace tutti::prims {

Status CheckRankRun(const RankRun& run) {
  if (run.program == nullptr || run.nranks < 1 || run.rank < 0 || run.rank >= run.nranks) {
    return InvalidArgument("no program, or rank " + std::to_string(run.rank) + " outside a world of " +
                           std::to_string(run.nranks));
  }
  if (DataTypeSize(run.type) == 0) return InvalidArgument("unknown data type");
  if (!OpTakesType(run.op, run.type) || run.op == RedOp::kAvg || run.op == RedOp::kPremulSum) {
    return InvalidArgument(std::string(RedOpName(run.op)) + " on " + DataTypeName(run.type) +
                           " is not an op the fused kernels apply");
  }
  // The program as rank `rank` of a world whose other ranks' programs are empty.
  std::vector<algo::PrimProgram> world(static_cast<size_t>(run.nranks));
  world[run.rank] = *run.program;
  TUTTI_RETURN_IF_ERROR(CheckWorld(world, world.size(), run.geom));
  std::vector<std::array<uint64_t, 3>> sizes(world.size(), {UINT64_MAX, UINT64_MAX, UINT64_MAX});
  sizes[run.rank] = {run.buf_bytes[0], run.buf_bytes[1], run.buf_bytes[2]};
  TUTTI_RETURN_IF_ERROR(CheckRegions(world, sizes, static_cast<uint32_t>(DataTypeSize(run.type))));
  const algo::PrimProgram& p = *run.program;
  const size_t entries = p.streams.size() * static_cast<size_t>(run.nranks);
  if (run.send.size() < entries || run.recv.size() < entries) {
    return InvalidArgument("connection tables of " + std::to_string(run.send.size()) + "/" +
                           std::to_string(run.recv.size()) + " entries for " + std::to_string(entries));
  }
  if (!p.streams.empty() && run.geom.proto == Proto::kLL && run.stage == nullptr) {
    return InvalidArgument("no LL staging memory");
  }
  for (size_t s = 0; s < p.streams.size(); ++s) {
    const algo::PrimStream& ps = p.streams[s];
    for (uint32_t k = 0; k < ps.nsteps; ++k) {
      const algo::PrimStep& step = p.steps[ps.first_step + k];
      for (uint32_t i = 0; i < step.nops; ++i) {
        const algo::PrimOp& op = p.ops[step.first_op + i];
        const size_t base = s * static_cast<size_t>(run.nranks);
        if ((op.send_peer >= 0 && run.send[base + op.send_peer] == nullptr) ||
            (op.recv_peer >= 0 && run.recv[base + op.recv_peer] == nullptr)) {
          return InvalidArgument("rank " + std::to_string(run.rank) + " stream " + std::to_string(s) + " step " +
                                 std::to_string(k) + ": no connection to rank " +
                                 std::to_string(op.send_peer >= 0 ? op.send_peer : op.recv_peer));
        }
      }
    }
  }
  return OkStatus();
}

}  // namespace tutti::prims
