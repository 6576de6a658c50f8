// Communicator's collectives: argument checks, buffer preparation (in-place, premul_sum, avg),
// algorithm choice, the call's signature, and starting the executor.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <mutex>
#include <tuple>

#include "algorithms/registry.h"
#include "core/coll/buffer_pool.h"
#include "core/coll/call_digest.h"
#include "core/coll/coll_call.h"
#include "core/coll/coll_registry.h"
#include "core/coll/device_path.h"
#include "core/coll/fused_path.h"
#include "core/coll/piece_size.h"
#include "core/coll/plan_cache.h"
#include "core/coll/selector.h"
#include "core/communicator.h"
#include "core/base/env.h"
#include "core/stream/host_stream.h"
#include "kernels/cpu/reduce.h"

namespace tutti {

using algo::Collective;
using namespace coll_call;

namespace {

// Keeps buffers a collective needs beyond the user's (copies, scaled inputs) alive.
struct Temps {
  std::shared_ptr<char> input, output;
  std::shared_ptr<char> input_mirror, output_mirror, scratch_mirror;  // device path: staging
};

// Online CPUs of this host (sysconf: every process on the host sees the same number, whatever
// its affinity), 0 if unknown.
int HostCpus() {
  static const int cpus = [] {
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? static_cast<int>(n) : 0;
  }();
  return cpus;
}
}  // namespace

Result<std::shared_ptr<const CollPlan>> Communicator::MakePlan(const CollCall& c, int nchannels, bool fused,
                                                              bool distinct) {
  const uint64_t n = static_cast<uint64_t>(size_);
  const size_t elem = DataTypeSize(c.type);
  auto plan = std::make_shared<CollPlan>();
  plan->name = algo::CollectiveName(c.coll);
  plan->fused = fused;
  const uint64_t call_bytes = CallBytes(c.coll, n, c.count, elem);
  TUTTI_ASSIGN_OR_RETURN(plan->algorithm, coll_cfg_->selector.Choose(c.coll, size_, call_bytes, transport_summary_,
                                                                     c.opts->algorithm, fused));
  // Over tcp, pieces unless asked otherwise (core/coll/piece_size.h). Every rank decides alike:
  // the ranks all share one host on every rank or on none, and a host's ranks see its CPUs alike.
  const bool between_hosts = local_size_ != size_;
  const int64_t chunk_bytes =
      coll_cfg_->chunk_bytes > 0      ? coll_cfg_->chunk_bytes
      : transport_summary_ != "tcp" ? 0
                                      : TcpPieceBytes(between_hosts, call_bytes, local_size_, HostCpus());
  plan->desc = plan->algorithm + ", count " + std::to_string(c.count) + ", " + DataTypeName(c.type) +
               (Reduces(c.coll) ? std::string(", ") + RedOpName(c.op) : "") +
               (Rooted(c.coll) ? ", root " + std::to_string(c.root) : "");
  // Everything the ranks must agree on; the sequence number is in the messages' tags.
  plan->sig = CallSignature(std::string(plan->name) + "(" + plan->desc + ")/" + std::to_string(nchannels) + "/" +
                    std::to_string(chunk_bytes) + (fused ? "/fused" : ""));
  algo::CollArgs args;
  args.coll = c.coll;
  args.nranks = size_;
  args.rank = rank_;
  args.root = Rooted(c.coll) ? c.root : 0;
  args.count = c.count;
  args.nchannels = nchannels;
  args.distinct = distinct;
  args.chunk = chunk_bytes > 0 ? std::max<uint64_t>(1, static_cast<uint64_t>(chunk_bytes) / elem) : 0;
  if (fused) args.chunk = std::max<uint64_t>(c.count, 1);  // one piece per channel
  TUTTI_ASSIGN_OR_RETURN(algo::Schedule schedule, algo::BuildSchedule(plan->algorithm, args));
  plan->schedule = std::make_shared<const algo::Schedule>(std::move(schedule));
  return std::shared_ptr<const CollPlan>(std::move(plan));
}

Result<Communicator::CallShape> Communicator::CheckCall(const CollCall& c) const {
  const CollOptions& o = *c.opts;
  auto who = [&] { return Who(rank_, c.coll); };
  if (destroyed_) return InvalidUsage(who() + " on a destroyed communicator");
  if (o.stream != nullptr)
    return InvalidArgument(who() + ": a stream is taken by the blocking form only (the stream orders it)");
  TUTTI_RETURN_IF_ERROR(engine_->failure());
  CallShape s;
  s.elem = DataTypeSize(c.type);
  const size_t elem = s.elem;
  if (elem == 0) return InvalidArgument(who() + ": unknown data type " + std::to_string(static_cast<int>(c.type)));
  if (static_cast<int>(c.op) >= kNumRedOps) return InvalidArgument(who() + ": unknown reduction op");
  if (Reduces(c.coll) && !OpTakesType(c.op, c.type))
    return InvalidArgument(who() + ": " + RedOpName(c.op) + " needs an integer type, not " + DataTypeName(c.type));
  if (Rooted(c.coll) && (c.root < 0 || c.root >= size_))
    return InvalidArgument(who() + ": root " + std::to_string(c.root) + " outside 0.." + std::to_string(size_ - 1));
  const uint64_t n = static_cast<uint64_t>(size_);
  // (count * n * elem > 2^62, without a division: a 64-bit division costs more than the rest of
  // these checks together.)
  if (static_cast<unsigned __int128>(c.count) * n * elem > static_cast<unsigned __int128>(1) << 62)
    return InvalidArgument(who() + ": count " + std::to_string(c.count) + " too large");
  std::tie(s.in_count, s.out_count) = BufferCounts(c.coll, n, c.count);
  s.is_root = c.root == rank_;
  s.need_in = s.in_count > 0 && !(c.coll == Collective::kScatter && !s.is_root) &&
              !(c.coll == Collective::kBroadcast && !s.is_root);
  s.need_out = s.out_count > 0 && !((c.coll == Collective::kReduce || c.coll == Collective::kGather) && !s.is_root);
  if (s.need_in && c.send == nullptr) return InvalidArgument(who() + ": null send buffer for " + std::to_string(s.in_count) + " elements");
  if (s.need_out && c.recv == nullptr) return InvalidArgument(who() + ": null recv buffer for " + std::to_string(s.out_count) + " elements");
  if (c.op == RedOp::kPremulSum && !std::isfinite(o.premul_scalar)) return InvalidArgument(who() + ": premul_sum scalar is not finite");
  if (c.op == RedOp::kPremulSum && Reduces(c.coll)) {
    // Checks the scalar (a whole number in range for integer types) before the call is issued;
    // with no elements ScaleBy touches no memory.
    if (Status st = kernels::ScaleBy(nullptr, nullptr, 0, c.type, o.premul_scalar); !st.ok()) return st.WithContext(who());
  }
  // Where the buffers live: host memory (the CPU path) or one device (the device path: local
  // work on the device's engine, messages staged through page-locked host memory).
  const int din = s.need_in ? devices_->DeviceOf(c.send, s.in_count * elem) : -1;
  const int dout = s.need_out ? devices_->DeviceOf(c.recv, s.out_count * elem) : -1;
  if (s.need_in && s.need_out && din != dout) {
    auto where = [](int d) { return d < 0 ? std::string("host memory") : "memory of device " + std::to_string(d); };
    return InvalidArgument(who() + ": the send buffer is " + where(din) + " and the receive buffer " + where(dout) +
                           ": both must be on one device, or both in host memory");
  }
  s.device = s.need_in ? din : dout;
  if (s.device < 0 && DevicePath::DriverPresent()) {
    if (s.need_in) TUTTI_RETURN_IF_ERROR(CheckHostAccessible(who(), "send", c.send, s.in_count * elem));
    if (s.need_out) TUTTI_RETURN_IF_ERROR(CheckHostAccessible(who(), "receive", c.recv, s.out_count * elem));
  }
  return s;
}

Result<std::shared_ptr<const CollPlan>> Communicator::PlanFor(const CollCall& c, const CallShape& shape) {
  const CollOptions& o = *c.opts;
  int nchannels = o.nchannels > 0 ? o.nchannels : coll_cfg_->nchannels;
  bool fused = false;
  if (shape.device >= 0 && fused_ != nullptr) {
    TUTTI_ASSIGN_OR_RETURN(fused, fused_->Usable(shape.device, o.timeout_s >= 0 ? o.timeout_s : timeout()));
  }
  if (fused && o.nchannels == 0 && fused_->config().auto_channels) {
    nchannels = fused_->config().ChannelsFor(CallBytes(c.coll, static_cast<uint64_t>(size_), c.count, shape.elem));
  }
  // An all_to_all whose buffers do not overlap receives every block straight into its place
  // (algorithms/pairwise.cc); the messages are the same either way, so ranks may differ in it.
  const bool distinct = c.coll == Collective::kAllToAll &&
                        !Overlap(c.send, shape.in_count * shape.elem, c.recv, shape.out_count * shape.elem);
  CollPlanKey key{c.coll, c.count, c.type, Reduces(c.coll) ? c.op : RedOp::kSum, Rooted(c.coll) ? c.root : 0, nchannels,
                  o.algorithm, fused, distinct};
  std::shared_ptr<const CollPlan> plan = plans_->Find(key);
  if (!plan) {
    TUTTI_ASSIGN_OR_RETURN(plan, MakePlan(c, nchannels, fused, distinct));
    plans_->Insert(key, plan);
  }
  return plan;
}

// Buffers: in-place and overlapping calls get a private copy of the input; premul_sum scales
// the input first; rooted collectives give non-roots a scratch output; avg divides at the end.
// On the device path local work goes to the device's engine and every buffer messages touch
// gets a page-locked host mirror.
Result<Communicator::PreparedRun> Communicator::PrepareRun(const CollCall& c, const CallShape& s, const CollPlan& plan,
                                                           uint64_t seq, bool staged) {
  const CollOptions& o = *c.opts;
  const size_t elem = s.elem;
  const int device = s.device;
  auto who = [&] { return Who(rank_, c.coll) + " #" + std::to_string(seq); };
  PreparedRun r;
  auto temps = std::make_shared<Temps>();
  r.local = local_;
  if (device >= 0) {
    auto engine = devices_->Engine(device);
    if (!engine.ok()) return engine.status().WithContext(who());
    r.local = *engine;
  }
  auto scratch_of = [&](uint64_t bytes) -> Result<std::shared_ptr<char>> {
    auto b = device >= 0 ? devices_->DeviceBuffer(device, bytes) : buffers_->Get(bytes);
    if (!b.ok()) return b.status().WithContext(who());
    return b;
  };
  const char* input = s.need_in ? static_cast<const char*>(c.send) : nullptr;
  char* output = static_cast<char*>(c.recv);
  if (!s.need_out && s.out_count > 0) {
    TUTTI_ASSIGN_OR_RETURN(temps->output, scratch_of(s.out_count * elem));
    output = temps->output.get();
  }
  // Schedules verified to run in place (algorithms/registry.h, InPlaceSafe) need no private copy
  // of the input when the buffers are laid out as NCCL's in-place calls are.
  bool native_in_place = false;
  if (input != nullptr && algo::InPlaceSafe(plan.algorithm, c.coll)) {
    const uint64_t block = static_cast<uint64_t>(rank_) * c.count * elem;
    switch (c.coll) {
      case Collective::kAllGather: native_in_place = input == output + block; break;
      case Collective::kReduceScatter: native_in_place = output == input + block; break;
      case Collective::kScatter: native_in_place = s.is_root && output == input + block; break;
      case Collective::kGather: native_in_place = s.is_root && input == output + block; break;
      default: native_in_place = input == output; break;
    }
  }
  r.extra.keep = temps;
  if (input != nullptr && !native_in_place && Overlap(input, s.in_count * elem, output, s.out_count * elem)) {
    TUTTI_ASSIGN_OR_RETURN(temps->input, scratch_of(s.in_count * elem));
    r.extra.before.push_back(exec::LocalTask::Copy(temps->input.get(), input, s.in_count, c.type));
    input = temps->input.get();
  }
  if (c.op == RedOp::kPremulSum && Reduces(c.coll) && input != nullptr) {
    if (!temps->input) {
      TUTTI_ASSIGN_OR_RETURN(temps->input, scratch_of(s.in_count * elem));
    }
    r.extra.before.push_back(exec::LocalTask::Scale(temps->input.get(), input, s.in_count, c.type, o.premul_scalar));
    input = temps->input.get();
  }
  r.local_op = (c.op == RedOp::kAvg || c.op == RedOp::kPremulSum) ? RedOp::kSum : c.op;
  if (c.op == RedOp::kAvg && Reduces(c.coll) && !(c.coll == Collective::kReduce && !s.is_root))
    r.extra.after.push_back(exec::LocalTask::Divide(output, s.out_count, c.type, size_));

  r.bufs = CollBuffers{input, output, s.in_count, s.out_count};
  TUTTI_ASSIGN_OR_RETURN(r.scratch, scratch_of(plan.schedule->scratch_count * elem));
  if (device >= 0 && staged) {
    auto mirror = [&](const char* buf, uint64_t count, std::shared_ptr<char>* keep) -> Result<char*> {
      if (buf == nullptr || count == 0) return nullptr;
      auto b = devices_->Staging(count * elem);
      if (!b.ok()) return b.status().WithContext(who());
      *keep = std::move(*b);
      return keep->get();
    };
    r.staging.enabled = true;
    TUTTI_ASSIGN_OR_RETURN(r.staging.input, mirror(input, s.in_count, &temps->input_mirror));
    TUTTI_ASSIGN_OR_RETURN(r.staging.output, mirror(output, s.out_count, &temps->output_mirror));
    TUTTI_ASSIGN_OR_RETURN(r.staging.scratch, mirror(r.scratch.get(), plan.schedule->scratch_count, &temps->scratch_mirror));
  }
  return r;
}

Result<Work> Communicator::StartCollective(const CollCall& c) {
  TUTTI_ASSIGN_OR_RETURN(CallShape shape, CheckCall(c));
  return StartChecked(c, shape);
}

Status Communicator::RunCollective(const CollCall& c) {
  TUTTI_ASSIGN_OR_RETURN(CallShape shape, CheckCall(c));
  if (TakesSlots(c, shape)) return RunSlotCollective(c, shape);
  // The progress thread keeps out of a blocking call from its start: otherwise it finds the
  // call in flight between its issue and its wait, and wakes every 20 us to drive it beside
  // the caller (who drives it anyway), taking a core from the ranks on a busy machine.
  P2PEngine::WaiterScope waiting(engine_.get());
  TUTTI_ASSIGN_OR_RETURN(Work w, StartChecked(c, shape));
  return w.Wait(c.opts->timeout_s);
}

Result<Work> Communicator::StartChecked(const CollCall& c, const CallShape& shape) {
  if (TakesSlots(c, shape)) return StartSlotCollective(c, shape);
  if (c.opts->algorithm == "slots")
    return InvalidArgument(Who(rank_, c.coll) + ": algorithm \"slots\" needs a communicator whose ranks share one "
                           "host and shared memory (TUTTI_SLOT_MAX > 0), and host memory");
  TUTTI_ASSIGN_OR_RETURN(std::shared_ptr<const CollPlan> plan, PlanFor(c, shape));
  if (TakesFused(shape, *plan)) return StartFused(c, shape, plan);
  const CollLabel label{plan->name, std::shared_ptr<const std::string>(plan, &plan->desc)};
  if (Status claim = colls_->BeginIssue(rank_, label); !claim.ok()) {
    // The other thread's call may already be paired with the wrong call on other ranks: stop
    // everything rather than risk a silently wrong result.
    engine_->FailAndNotify(claim);
    return claim;
  }
  const uint64_t seq = ++coll_seq_;
  const uint32_t msg_sig = trail_.Next(plan->sig);
  // From here on the call has its sequence number, which the other ranks' calls share: a
  // failure now (out of memory, say) leaves them waiting for our messages, so it fails the
  // communicator and tells the peers why instead of letting them run into their timeout.
  Result<Work> started = [&]() -> Result<Work> {
    TUTTI_ASSIGN_OR_RETURN(PreparedRun p, PrepareRun(c, shape, *plan, seq));
    auto run = std::make_shared<CollectiveRun>(engine_, std::move(p.local), plan->schedule, p.bufs, std::move(p.scratch),
                                               c.type, p.local_op, msg_sig, seq, label, std::move(p.extra), p.staging);
    TUTTI_RETURN_IF_ERROR(run->Validate());
    // Collectives that only move blocks receive them where they stay: one-sided reads serve
    // them in one copy. Not the reductions, whose pieces are combined. Broadcast only where the
    // host has two ranks or more per CPU (the CPUs, not the handshake each read waits for, are
    // the limit), up to 16 MiB. 2-vCPU VM, medians of 3, time with reads / through the FIFO:
    // 4 ranks 256 KiB-16 MiB 0.74-0.92 (1 MiB once 1.04), 64 MiB 1.12; 8 ranks 1-16 MiB 0.82-0.9;
    // but 3 ranks 1-16 MiB 0.94-1.44 and 2 ranks 256 KiB-64 MiB 0.99-1.35. (Each receiver decides
    // for itself.)
    const bool reads_pieces = c.coll == Collective::kBroadcast && HostCpus() > 0 && local_size_ >= 2 * HostCpus() &&
                              c.count * shape.elem <= (uint64_t{16} << 20);
    // And the pieces of a mid-size all_reduce or reduce_scatter (kReducedReadMin).
    const bool reads_reduced = ReadsReducedPieces(
        c.coll, CallBytes(c.coll, static_cast<uint64_t>(size_), c.count, shape.elem), local_size_, HostCpus());
    run->SetCopyReceives(MovesBlocks(c.coll) || reads_pieces || reads_reduced);
    colls_->EndIssue(run);
    run->Advance();
    const double limit = c.opts->timeout_s >= 0 ? c.opts->timeout_s : timeout();
    return Work(std::make_shared<CollWork>(run, engine_, colls_, rank_, limit, engine_->options().spin_us,
                                           engine_->options().yield_us));
  }();
  if (!started.ok()) {
    colls_->EndIssue(nullptr);
    engine_->FailAndNotify(started.status());
  }
  return started;
}

// A blocking collective; with o.stream, the same call queued on the stream (the lambda's `o` is
// the options without the stream; arguments are captured by value); in a group, started and
// handed to the group.
#define TUTTI_BLOCKING(name, call, ...)                                         \
  if (o.stream != nullptr)                                                      \
    return OnStream(o, name, [=, this](const CollOptions& o) -> Status {        \
      TUTTI_ASSIGN_OR_RETURN(Work w, call);                                     \
      return w.Wait(o.timeout_s);                                               \
    });                                                                         \
  if (InGroup()) return AddToGroup(call, o.timeout_s, name);                    \
  return RunCollective({__VA_ARGS__, &o})

struct StreamGate {
  std::mutex mu;
  bool alive = true;
};

Status Communicator::OnStream(const CollOptions& o, const std::string& what,
                              std::function<Status(const CollOptions&)> call) {
  const std::string who = "rank " + std::to_string(rank_) + ": " + what;
  if (destroyed_) return InvalidUsage(who + " on a destroyed communicator");
  CollOptions run = o;
  run.stream = nullptr;
  if (!stream_gate_) stream_gate_ = std::make_shared<StreamGate>();  // issuing thread only
  std::shared_ptr<StreamGate> gate = stream_gate_;
  o.stream->Enqueue(who, [gate, run, call = std::move(call), who] {
    std::lock_guard<std::mutex> lock(gate->mu);  // Destroy waits for a call that is running
    if (!gate->alive) return InvalidUsage(who + ": the communicator was destroyed before the call ran");
    return call(run);
  });
  return OkStatus();
}

void Communicator::CloseStreamGate() {
  if (!stream_gate_) return;
  std::lock_guard<std::mutex> lock(stream_gate_->mu);
  stream_gate_->alive = false;
}

Result<Work> Communicator::IBroadcast(const void* send, void* recv, size_t count, DataType type, int root, const CollOptions& o) {
  return StartCollective({Collective::kBroadcast, send, recv, count, type, RedOp::kSum, root, &o});
}
Result<Work> Communicator::IReduce(const void* send, void* recv, size_t count, DataType type, RedOp op, int root,
                                   const CollOptions& o) {
  return StartCollective({Collective::kReduce, send, recv, count, type, op, root, &o});
}
Result<Work> Communicator::IScatter(const void* send, void* recv, size_t count, DataType type, int root, const CollOptions& o) {
  return StartCollective({Collective::kScatter, send, recv, count, type, RedOp::kSum, root, &o});
}
Result<Work> Communicator::IGather(const void* send, void* recv, size_t count, DataType type, int root, const CollOptions& o) {
  return StartCollective({Collective::kGather, send, recv, count, type, RedOp::kSum, root, &o});
}
Result<Work> Communicator::IAllReduce(const void* send, void* recv, size_t count, DataType type, RedOp op,
                                      const CollOptions& o) {
  return StartCollective({Collective::kAllReduce, send, recv, count, type, op, 0, &o});
}
Result<Work> Communicator::IAllGather(const void* send, void* recv, size_t count, DataType type, const CollOptions& o) {
  return StartCollective({Collective::kAllGather, send, recv, count, type, RedOp::kSum, 0, &o});
}
Result<Work> Communicator::IReduceScatter(const void* send, void* recv, size_t count, DataType type, RedOp op,
                                          const CollOptions& o) {
  return StartCollective({Collective::kReduceScatter, send, recv, count, type, op, 0, &o});
}
Result<Work> Communicator::IAllToAll(const void* send, void* recv, size_t count, DataType type, const CollOptions& o) {
  return StartCollective({Collective::kAllToAll, send, recv, count, type, RedOp::kSum, 0, &o});
}
Result<Work> Communicator::IBarrier(const CollOptions& o) {
  return StartCollective({Collective::kBarrier, nullptr, nullptr, 0, DataType::kUint8, RedOp::kSum, 0, &o});
}

Status Communicator::Broadcast(const void* send, void* recv, size_t count, DataType type, int root, const CollOptions& o) {
  TUTTI_BLOCKING("broadcast", IBroadcast(send, recv, count, type, root, o), Collective::kBroadcast, send, recv, count, type,
                 RedOp::kSum, root);
}
Status Communicator::Reduce(const void* send, void* recv, size_t count, DataType type, RedOp op, int root,
                            const CollOptions& o) {
  TUTTI_BLOCKING("reduce", IReduce(send, recv, count, type, op, root, o), Collective::kReduce, send, recv, count, type, op,
                 root);
}
Status Communicator::Scatter(const void* send, void* recv, size_t count, DataType type, int root, const CollOptions& o) {
  TUTTI_BLOCKING("scatter", IScatter(send, recv, count, type, root, o), Collective::kScatter, send, recv, count, type,
                 RedOp::kSum, root);
}
Status Communicator::Gather(const void* send, void* recv, size_t count, DataType type, int root, const CollOptions& o) {
  TUTTI_BLOCKING("gather", IGather(send, recv, count, type, root, o), Collective::kGather, send, recv, count, type,
                 RedOp::kSum, root);
}
Status Communicator::AllReduce(const void* send, void* recv, size_t count, DataType type, RedOp op, const CollOptions& o) {
  TUTTI_BLOCKING("all_reduce", IAllReduce(send, recv, count, type, op, o), Collective::kAllReduce, send, recv, count, type,
                 op, 0);
}
Status Communicator::AllGather(const void* send, void* recv, size_t count, DataType type, const CollOptions& o) {
  TUTTI_BLOCKING("all_gather", IAllGather(send, recv, count, type, o), Collective::kAllGather, send, recv, count, type,
                 RedOp::kSum, 0);
}
Status Communicator::ReduceScatter(const void* send, void* recv, size_t count, DataType type, RedOp op,
                                   const CollOptions& o) {
  TUTTI_BLOCKING("reduce_scatter", IReduceScatter(send, recv, count, type, op, o), Collective::kReduceScatter, send, recv,
                 count, type, op, 0);
}
Status Communicator::AllToAll(const void* send, void* recv, size_t count, DataType type, const CollOptions& o) {
  TUTTI_BLOCKING("all_to_all", IAllToAll(send, recv, count, type, o), Collective::kAllToAll, send, recv, count, type,
                 RedOp::kSum, 0);
}
Status Communicator::Barrier(const CollOptions& o) { TUTTI_BLOCKING("barrier", IBarrier(o), Collective::kBarrier, nullptr, nullptr, 0, DataType::kUint8, RedOp::kSum, 0); }

}  // namespace tutti
