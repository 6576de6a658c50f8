#include "kernels/prims/host_rank.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "kernels/functors.h"
#include "kernels/prims/host_poll.h"
#include "kernels/prims/report.h"
#include "kernels/prims/stream_exec.h"
#include "kernels/prims/team.h"

namespace tutti::prims {
namespace {

template <class S, class Op>
Status RunTyped(const RankRun& run) {
  const algo::PrimProgram& p = *run.program;
  const uint32_t nstreams = static_cast<uint32_t>(p.streams.size());
  RankView v;
  v.rank = run.rank;
  v.nranks = run.nranks;
  for (int b = 0; b < 3; ++b) v.bufs[b] = run.bufs[b];
  v.send = run.send.data();
  v.recv = run.recv.data();
  v.geom = run.geom;
  v.stage = run.stage;
  v.tag = run.tag;
  const ProgramView pv{p.streams.data(), p.steps.data(), p.ops.data(), nstreams};
  std::vector<StreamState> states(nstreams);
  std::atomic<bool> failed{false};
  auto body = [&](uint32_t s) {
    const Team team;
    StreamExec<S, Op> exec(pv, v, s, &states[s]);
    PollUntilDone(exec, team, failed, run.timeout_s, [](bool) {}, run.cancelled);
  };
  if (run.before_launch) TUTTI_RETURN_IF_ERROR(run.before_launch());
  // The last stream runs on the calling thread: a one-stream program starts no thread.
  std::vector<std::thread> threads;
  for (uint32_t s = 0; s + 1 < nstreams; ++s) threads.emplace_back(body, s);
  if (nstreams > 0) body(nstreams - 1);
  for (auto& t : threads) t.join();
  return FirstFailure(
      nstreams,
      [&](size_t i, const algo::PrimProgram** prog, int* rank, uint32_t* stream) {
        *prog = &p;
        *rank = run.rank;
        *stream = static_cast<uint32_t>(i);
        return &states[i];
      },
      PieceElems(run.geom, static_cast<uint32_t>(DataTypeSize(run.type))), run.timeout_s);
}

}  // namespace

Status RunHostRank(const RankRun& run) {
  if (Status st = CheckRankRun(run); !st.ok()) return st.WithContext("RunHostRank");
  const Status bad_type = InvalidArgument(std::string("RunHostRank: ") + RedOpName(run.op) + " on " +
                                          DataTypeName(run.type));
  return kernels::DispatchType(
      run.type,
      [&](auto tag) -> Status {
        using S = typename decltype(tag)::type;
        return kernels::DispatchOp<kernels::Accum<S>>(
            run.op, [&](auto optag) -> Status { return RunTyped<S, typename decltype(optag)::type>(run); },
            [&] { return bad_type; });
      },
      [&] { return bad_type; });
}

}  // namespace tutti::prims
