// Communicator's v-collectives (all_to_all_v, all_gather_v, gather_v, scatter_v,
// reduce_scatter_v): argument checks, then the schedule of algorithms/vector.h run by the
// collective executor, in the same numbering as the other collectives (so a rank that called
// something else here is caught by the messages' signatures).
#include <cmath>
#include <memory>
#include <string>
#include <utility>

#include "algorithms/vector.h"
#include "core/coll/buffer_pool.h"
#include "core/coll/call_digest.h"
#include "core/coll/coll_call.h"
#include "core/coll/coll_registry.h"
#include "core/coll/executor.h"
#include "core/communicator.h"
#include "kernels/cpu/reduce.h"

namespace tutti {

namespace {

algo::VBlocks ToVBlocks(const Communicator::Blocks& b) {
  if (!b.displs.empty()) return {b.counts, b.displs};
  return algo::VBlocks::Packed(b.counts);
}

}  // namespace

struct Communicator::VCall {
  const char* name;
  const void* send;
  uint64_t in_count;  // elements of the send buffer this rank provides (0: none)
  void* recv;
  uint64_t out_count;
  DataType type;
  RedOp op;
  bool reduces;
  std::shared_ptr<const algo::Schedule> schedule;
  Status bad;  // an argument error found while building the call
  CollOptions opts;
};

Result<Work> Communicator::StartVector(const VCall& c) {
  const std::string who = "rank " + std::to_string(rank_) + ": " + c.name;
  if (destroyed_) return InvalidUsage(who + " on a destroyed communicator");
  if (!c.bad.ok()) return c.bad.WithContext(who);
  const size_t elem = DataTypeSize(c.type);
  if (elem == 0) return InvalidArgument(who + ": unknown data type " + std::to_string(static_cast<int>(c.type)));
  if (c.reduces) {
    if (static_cast<int>(c.op) >= kNumRedOps) return InvalidArgument(who + ": unknown reduction op");
    if (c.op == RedOp::kPremulSum) {
      if (!std::isfinite(c.opts.premul_scalar)) return InvalidArgument(who + ": premul_sum scalar is not finite");
      // The scalar must suit the type (a whole number in range for integer types); no memory touched.
      if (Status st = kernels::ScaleBy(nullptr, nullptr, 0, c.type, c.opts.premul_scalar); !st.ok())
        return st.WithContext(who);
    }
    if (!OpTakesType(c.op, c.type))
      return InvalidArgument(who + ": " + RedOpName(c.op) + " needs an integer type, not " + DataTypeName(c.type));
  }
  if (c.in_count > 0 && c.send == nullptr) return InvalidArgument(who + ": null send buffer");
  if (c.out_count > 0 && c.recv == nullptr) return InvalidArgument(who + ": null receive buffer");
  if (c.in_count > (~uint64_t{0}) / elem || c.out_count > (~uint64_t{0}) / elem)
    return InvalidArgument(who + ": buffer size overflows");
  if (coll_call::Overlap(c.send, c.in_count * elem, c.recv, c.out_count * elem))
    return InvalidArgument(who + ": the send and receive buffers overlap (the v-collectives have no in-place form)");
  TUTTI_RETURN_IF_ERROR(CheckHostAccessible(who, "send", c.send, c.in_count * elem));
  TUTTI_RETURN_IF_ERROR(CheckHostAccessible(who, "receive", c.recv, c.out_count * elem));

  const CollLabel label = CollLabel::Of(std::string(c.name) + " (" + DataTypeName(c.type) +
                                        (c.reduces ? std::string(", ") + RedOpName(c.op) : std::string()) + ")");
  if (Status claim = colls_->BeginIssue(rank_, label); !claim.ok()) {
    engine_->FailAndNotify(claim);
    return claim;
  }
  const uint64_t seq = ++coll_seq_;
  // The call's collective, type and op (the counts differ between ranks), without formatting.
  const uint64_t op_field = c.reduces ? static_cast<uint64_t>(c.op) + 1 : 0;
  const uint32_t sig = trail_.Next(ChainDigest(CallSignature(c.name), static_cast<uint64_t>(c.type), op_field));
  Result<Work> started = [&]() -> Result<Work> {
    TUTTI_ASSIGN_OR_RETURN(std::shared_ptr<char> scratch, buffers_->Get(c.schedule->scratch_count * elem));
    // premul_sum: this rank's input scaled into a private copy first; avg: the sum divided by the
    // number of ranks at the end. Both then reduce as sum.
    const char* send = static_cast<const char*>(c.send);
    CollLocalWork extra;
    if (c.reduces && c.op == RedOp::kPremulSum && c.in_count > 0) {
      TUTTI_ASSIGN_OR_RETURN(std::shared_ptr<char> scaled, buffers_->Get(c.in_count * elem));
      extra.before.push_back(exec::LocalTask::Scale(scaled.get(), send, c.in_count, c.type, c.opts.premul_scalar));
      send = scaled.get();
      extra.keep = std::move(scaled);
    }
    if (c.reduces && c.op == RedOp::kAvg && c.out_count > 0) {
      extra.after.push_back(exec::LocalTask::Divide(c.recv, c.out_count, c.type, size_));
    }
    const RedOp run_op = !c.reduces ? RedOp::kSum : (c.op == RedOp::kAvg || c.op == RedOp::kPremulSum) ? RedOp::kSum : c.op;
    const CollBuffers bufs{send, static_cast<char*>(c.recv), c.in_count, c.out_count};
    auto run = std::make_shared<CollectiveRun>(engine_, local_, c.schedule, bufs, std::move(scratch), c.type, run_op,
                                               sig, seq, label, std::move(extra));
    TUTTI_RETURN_IF_ERROR(run->Validate());
    run->SetCopyReceives(!c.reduces);  // (as the collectives of the same name: all but reduce_scatter_v)
    colls_->EndIssue(run);
    run->Advance();
    const double limit = c.opts.timeout_s >= 0 ? c.opts.timeout_s : timeout();
    return Work(std::make_shared<CollWork>(run, engine_, colls_, rank_, limit, engine_->options().spin_us,
                                           engine_->options().yield_us));
  }();
  if (!started.ok()) {
    // The other ranks' calls share this one's number: they would wait for our messages.
    colls_->EndIssue(nullptr);
    engine_->FailAndNotify(started.status());
  }
  return started;
}

Result<Work> Communicator::IAllToAllV(const void* send, const Blocks& sb, void* recv, const Blocks& rb, DataType type,
                                      const CollOptions& o) {
  VCall c{"all_to_all_v", send, 0, recv, 0, type, RedOp::kSum, false, nullptr, OkStatus(), o};
  const algo::VBlocks s = ToVBlocks(sb), r = ToVBlocks(rb);
  c.bad = algo::ValidateBlocks(s, size_, "send blocks", false);
  if (c.bad.ok()) c.bad = algo::ValidateBlocks(r, size_, "receive blocks", true);
  if (c.bad.ok()) {
    c.in_count = s.Extent();
    c.out_count = r.Extent();
    c.schedule = std::make_shared<const algo::Schedule>(algo::AllToAllV(size_, rank_, s, r));
  }
  return StartVector(c);
}

Result<Work> Communicator::IAllGatherV(const void* send, uint64_t count, void* recv, const Blocks& rb, DataType type,
                                       const CollOptions& o) {
  VCall c{"all_gather_v", send, count, recv, 0, type, RedOp::kSum, false, nullptr, OkStatus(), o};
  const algo::VBlocks r = ToVBlocks(rb);
  c.bad = algo::ValidateBlocks(r, size_, "receive blocks", true);
  if (c.bad.ok() && r.counts[rank_] != count)
    c.bad = MismatchError("this rank sends " + std::to_string(count) + " elements but its receive block " +
                          std::to_string(rank_) + " holds " + std::to_string(r.counts[rank_]));
  if (c.bad.ok()) {
    c.out_count = r.Extent();
    c.schedule = std::make_shared<const algo::Schedule>(algo::AllGatherV(size_, rank_, count, r));
  }
  return StartVector(c);
}

Result<Work> Communicator::IGatherV(const void* send, uint64_t count, void* recv, const Blocks& rb, DataType type,
                                    int root, const CollOptions& o) {
  VCall c{"gather_v", send, count, recv, 0, type, RedOp::kSum, false, nullptr, OkStatus(), o};
  if (root < 0 || root >= size_) {
    c.bad = InvalidArgument("root " + std::to_string(root) + " is outside 0.." + std::to_string(size_ - 1));
    return StartVector(c);
  }
  algo::VBlocks r;
  if (rank_ == root) {
    r = ToVBlocks(rb);
    c.bad = algo::ValidateBlocks(r, size_, "receive blocks", true);
    if (c.bad.ok() && r.counts[rank_] != count)
      c.bad = MismatchError("the root sends " + std::to_string(count) + " elements but its receive block holds " +
                            std::to_string(r.counts[rank_]));
    if (c.bad.ok()) c.out_count = r.Extent();
  }
  if (c.bad.ok()) c.schedule = std::make_shared<const algo::Schedule>(algo::GatherV(size_, rank_, root, count, r));
  return StartVector(c);
}

Result<Work> Communicator::IScatterV(const void* send, const Blocks& sb, void* recv, uint64_t count, DataType type,
                                     int root, const CollOptions& o) {
  VCall c{"scatter_v", send, 0, recv, count, type, RedOp::kSum, false, nullptr, OkStatus(), o};
  if (root < 0 || root >= size_) {
    c.bad = InvalidArgument("root " + std::to_string(root) + " is outside 0.." + std::to_string(size_ - 1));
    return StartVector(c);
  }
  algo::VBlocks s;
  if (rank_ == root) {
    s = ToVBlocks(sb);
    c.bad = algo::ValidateBlocks(s, size_, "send blocks", false);
    if (c.bad.ok() && s.counts[rank_] != count)
      c.bad = MismatchError("the root receives " + std::to_string(count) + " elements but its send block holds " +
                            std::to_string(s.counts[rank_]));
    if (c.bad.ok()) c.in_count = s.Extent();
  }
  if (c.bad.ok()) c.schedule = std::make_shared<const algo::Schedule>(algo::ScatterV(size_, rank_, root, s, count));
  return StartVector(c);
}

Result<Work> Communicator::IReduceScatterV(const void* send, void* recv, const std::vector<uint64_t>& counts,
                                           DataType type, RedOp op, const CollOptions& o) {
  VCall c{"reduce_scatter_v", send, 0, recv, 0, type, op, true, nullptr, OkStatus(), o};
  const algo::VBlocks in = algo::VBlocks::Packed(counts);
  c.bad = algo::ValidateBlocks(in, size_, "counts", false);
  if (c.bad.ok()) {
    c.in_count = in.Extent();
    c.out_count = counts[rank_];
    c.schedule = std::make_shared<const algo::Schedule>(algo::ReduceScatterV(size_, rank_, counts));
  }
  return StartVector(c);
}

Status Communicator::AllToAllV(const void* send, const Blocks& sb, void* recv, const Blocks& rb, DataType type,
                               const CollOptions& o) {
  if (o.stream == nullptr) {
    if (InGroup()) return AddToGroup(IAllToAllV(send, sb, recv, rb, type, o), o.timeout_s, "all_to_all_v");
    TUTTI_ASSIGN_OR_RETURN(Work w, IAllToAllV(send, sb, recv, rb, type, o));
    return w.Wait(o.timeout_s);
  }
  return OnStream(o, "all_to_all_v", [=, this](const CollOptions& run) { return AllToAllV(send, sb, recv, rb, type, run); });
}

Status Communicator::AllGatherV(const void* send, uint64_t count, void* recv, const Blocks& rb, DataType type,
                                const CollOptions& o) {
  if (o.stream == nullptr) {
    if (InGroup()) return AddToGroup(IAllGatherV(send, count, recv, rb, type, o), o.timeout_s, "all_gather_v");
    TUTTI_ASSIGN_OR_RETURN(Work w, IAllGatherV(send, count, recv, rb, type, o));
    return w.Wait(o.timeout_s);
  }
  return OnStream(o, "all_gather_v", [=, this](const CollOptions& run) { return AllGatherV(send, count, recv, rb, type, run); });
}

Status Communicator::GatherV(const void* send, uint64_t count, void* recv, const Blocks& rb, DataType type, int root,
                             const CollOptions& o) {
  if (o.stream == nullptr) {
    if (InGroup()) return AddToGroup(IGatherV(send, count, recv, rb, type, root, o), o.timeout_s, "gather_v");
    TUTTI_ASSIGN_OR_RETURN(Work w, IGatherV(send, count, recv, rb, type, root, o));
    return w.Wait(o.timeout_s);
  }
  return OnStream(o, "gather_v", [=, this](const CollOptions& run) { return GatherV(send, count, recv, rb, type, root, run); });
}

Status Communicator::ScatterV(const void* send, const Blocks& sb, void* recv, uint64_t count, DataType type, int root,
                              const CollOptions& o) {
  if (o.stream == nullptr) {
    if (InGroup()) return AddToGroup(IScatterV(send, sb, recv, count, type, root, o), o.timeout_s, "scatter_v");
    TUTTI_ASSIGN_OR_RETURN(Work w, IScatterV(send, sb, recv, count, type, root, o));
    return w.Wait(o.timeout_s);
  }
  return OnStream(o, "scatter_v", [=, this](const CollOptions& run) { return ScatterV(send, sb, recv, count, type, root, run); });
}

Status Communicator::ReduceScatterV(const void* send, void* recv, const std::vector<uint64_t>& counts, DataType type,
                                    RedOp op, const CollOptions& o) {
  if (o.stream == nullptr) {
    if (InGroup()) return AddToGroup(IReduceScatterV(send, recv, counts, type, op, o), o.timeout_s, "reduce_scatter_v");
    TUTTI_ASSIGN_OR_RETURN(Work w, IReduceScatterV(send, recv, counts, type, op, o));
    return w.Wait(o.timeout_s);
  }
  return OnStream(o, "reduce_scatter_v",
                  [=, this](const CollOptions& run) { return ReduceScatterV(send, recv, counts, type, op, run); });
}

}  // namespace tutti
