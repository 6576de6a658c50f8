// Communicator's collectives on device memory through the fused kernels (core/coll/fused_path.h):
// the call is claimed and numbered as every collective is, its input prepared on the device's
// engine (private copy, premul_sum scaling), the rank kernel run over the connections, the
// output finished (avg division), all before the call returns.
#include <memory>

#include "algorithms/lowering.h"
#include "core/coll/coll_call.h"
#include "core/coll/coll_registry.h"
#include "core/coll/device_path.h"
#include "core/coll/fused_path.h"
#include "core/coll/plan_cache.h"
#include "core/communicator.h"
#include "core/exec/local_engine.h"
#include "core/p2p/engine.h"

namespace tutti {

using namespace coll_call;

namespace {

// A call that finished before its Work was handed out.
class DoneWork : public WorkImpl {
 public:
  Status Wait(double) override { return OkStatus(); }
  bool Test() override { return true; }
  bool IsCompleted() const override { return true; }
  Status status() const override { return OkStatus(); }
};

Status RunTasks(exec::LocalEngine& engine, const std::vector<exec::LocalTask>& tasks, double timeout_s) {
  if (tasks.empty()) return OkStatus();
  uint64_t first = 0, last = 0;
  for (const exec::LocalTask& t : tasks) {
    TUTTI_ASSIGN_OR_RETURN(last, engine.Post(t));
    if (first == 0) first = last;
  }
  return engine.Wait(first, last, timeout_s);
}

}  // namespace

// Every input is the same on every rank that calls with device memory: the communicator (one
// host, TUTTI_FUSED, every rank reaches every peer's memory: the plan is fused), and the plan's
// channels.
bool Communicator::TakesFused(const CallShape& shape, const CollPlan& plan) const {
  return shape.device >= 0 && plan.fused && plan.schedule->streams.size() <= fused_->config().streams;
}

Result<Work> Communicator::StartFused(const CollCall& c, const CallShape& shape,
                                      const std::shared_ptr<const CollPlan>& plan) {
  auto who = [&] { return Who(rank_, c.coll) + " (" + plan->desc + ", fused)"; };
  std::call_once(plan->lower_once, [&] {
    Result<algo::PrimProgram> p = algo::LowerSchedule(*plan->schedule);
    if (p.ok()) {
      plan->lowered = std::make_shared<const algo::PrimProgram>(std::move(*p));
    } else {
      plan->lower_status = p.status();
    }
  });
  if (!plan->lowered) {
    return plan->lower_status.WithContext(who() + ": the schedule does not lower to the fused kernels (TUTTI_FUSED=0 "
                                          "runs it staged)");
  }
  const CollLabel label{plan->name, std::shared_ptr<const std::string>(plan, &plan->desc)};
  if (Status claim = colls_->BeginIssue(rank_, label); !claim.ok()) {
    engine_->FailAndNotify(claim);
    return claim;
  }
  const uint64_t seq = ++coll_seq_;
  // The trail after this call, as the messages of a staged call would carry it: every piece of
  // the fused call carries it too.
  const uint32_t tag = trail_.Next(plan->sig);
  const double timeout_s = c.opts->timeout_s >= 0 ? c.opts->timeout_s : timeout();
  Status st = [&]() -> Status {
    TUTTI_ASSIGN_OR_RETURN(PreparedRun p, PrepareRun(c, shape, *plan, seq, /*staged=*/false));
    TUTTI_RETURN_IF_ERROR(RunTasks(*p.local, p.extra.before, timeout_s));
    uint8_t* bufs[3] = {reinterpret_cast<uint8_t*>(const_cast<char*>(p.bufs.input)),
                        reinterpret_cast<uint8_t*>(p.bufs.output), reinterpret_cast<uint8_t*>(p.scratch.get())};
    const uint64_t bytes[3] = {p.bufs.input_count * shape.elem, p.bufs.output_count * shape.elem,
                               plan->schedule->scratch_count * shape.elem};
    const uint64_t call_bytes = CallBytes(c.coll, static_cast<uint64_t>(size_), c.count, shape.elem);
    // A peer that fails (a mismatch it saw, its timeout) says so in a CLOSE: read while the
    // kernel waits, it stops the kernel at once instead of at its timeout.
    P2PEngine* engine = engine_.get();
    auto cancelled = [engine] {
      engine->Poll();
      return !engine->failure().ok();
    };
    TUTTI_RETURN_IF_ERROR(fused_->Run(shape.device, *plan->lowered, c.type, p.local_op, bufs, bytes, call_bytes, tag,
                                      timeout_s, cancelled));
    return RunTasks(*p.local, p.extra.after, timeout_s);
  }();
  colls_->EndIssue(nullptr);
  if (!st.ok()) {
    // Stopped because the communicator failed: its failure (a peer's, naming the cause) says why.
    if (Status failure = engine_->failure(); st.code() == Code::kAborted && !failure.ok()) st = failure;
    st = st.WithContext(who() + " #" + std::to_string(seq));
    // The peers' kernels are in the same call: the communicator fails and tells them (its
    // CLOSE stops their runs through `cancelled`), so that they and its other calls say why.
    if (st.code() != Code::kInvalidArgument) engine_->FailAndNotify(st);
    return st;
  }
  return Work(std::make_shared<DoneWork>());
}

}  // namespace tutti
