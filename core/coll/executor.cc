#include "core/coll/executor.h"

#include <cstring>

#include "core/logging.h"
#include "kernels/cpu/reduce.h"

namespace tutti {

CollectiveRun::CollectiveRun(std::shared_ptr<P2PEngine> engine, algo::Schedule schedule, CollBuffers bufs,
                             std::shared_ptr<char> scratch, DataType type, RedOp op, uint32_t sig, uint64_t seq,
                             std::string what, std::function<Status()> finalize)
    : engine_(std::move(engine)),
      schedule_(std::move(schedule)),
      bufs_(bufs),
      scratch_(std::move(scratch)),
      type_(type),
      op_(op),
      elem_(DataTypeSize(type)),
      sig_(sig),
      seq_(seq),
      what_(std::move(what)),
      finalize_(std::move(finalize)),
      streams_(schedule_.streams.size()) {
  if (schedule_.streams.empty()) Finish(finalize_ ? finalize_() : OkStatus());
}

Status CollectiveRun::Validate() const {
  if (schedule_.streams.size() > static_cast<size_t>(kMaxStreams))
    return InternalError(what_ + ": schedule has " + std::to_string(schedule_.streams.size()) + " streams");
  auto check = [&](const algo::Region& r, bool writes) -> Status {
    uint64_t size = r.buf == algo::Buf::kInput    ? bufs_.input_count
                    : r.buf == algo::Buf::kOutput ? bufs_.output_count
                                                  : schedule_.scratch_count;
    if (writes && r.buf == algo::Buf::kInput) return InternalError(what_ + ": schedule writes the input");
    if (r.offset > size || r.count > size - r.offset)
      return InternalError(what_ + ": schedule region [" + std::to_string(r.offset) + ", +" + std::to_string(r.count) +
                           ") outside a buffer of " + std::to_string(size) + " elements");
    if (r.count > 0 && r.buf == algo::Buf::kInput && bufs_.input == nullptr)
      return InternalError(what_ + ": schedule reads a missing input");
    if (r.count > 0 && r.buf == algo::Buf::kScratch && scratch_ == nullptr)
      return InternalError(what_ + ": schedule uses scratch that was not provided");
    return OkStatus();
  };
  for (const auto& stream : schedule_.streams)
    for (const auto& step : stream.steps) {
      for (const auto& t : step.recvs) TUTTI_RETURN_IF_ERROR(check(t.region, true));
      for (const auto& t : step.sends) TUTTI_RETURN_IF_ERROR(check(t.region, false));
      for (const auto& l : step.locals) {
        TUTTI_RETURN_IF_ERROR(check(l.dst, true));
        if (l.srcs.empty()) return InternalError(what_ + ": local operation without sources");
        for (const auto& src : l.srcs) {
          TUTTI_RETURN_IF_ERROR(check(src, false));
          if (src.count != l.dst.count) return InternalError(what_ + ": local operation with uneven counts");
        }
      }
    }
  return OkStatus();
}

char* CollectiveRun::Ptr(const algo::Region& r) const {
  char* base = r.buf == algo::Buf::kInput    ? const_cast<char*>(bufs_.input)
               : r.buf == algo::Buf::kOutput ? bufs_.output
                                             : scratch_.get();
  return base == nullptr ? nullptr : base + r.offset * elem_;
}

int CollectiveRun::Tag(size_t stream) const {
  return -1 - static_cast<int>(((seq_ & 0xFFFFF) << 10) + stream);
}

Status CollectiveRun::PostStep(size_t s) {
  StreamState& st = streams_[s];
  const algo::Step& step = schedule_.streams[s].steps[st.step];
  st.ops.clear();
  for (const auto& t : step.recvs) {
    TUTTI_ASSIGN_OR_RETURN(auto op, engine_->PostRecv(Ptr(t.region), t.region.count * elem_, t.peer, Tag(s), sig_));
    st.ops.push_back(std::move(op));
  }
  for (const auto& t : step.sends) {
    TUTTI_ASSIGN_OR_RETURN(auto op, engine_->PostSend(Ptr(t.region), t.region.count * elem_, t.peer, Tag(s), sig_));
    st.ops.push_back(std::move(op));
  }
  st.posted = true;
  return OkStatus();
}

Status CollectiveRun::RunLocals(const algo::Step& step) {
  for (const auto& l : step.locals) {
    char* dst = Ptr(l.dst);
    if (l.dst.count == 0) continue;
    if (l.kind == algo::LocalOp::Kind::kCopy) {
      const char* src = Ptr(l.srcs[0]);
      if (src != dst) std::memcpy(dst, src, l.dst.count * elem_);
      continue;
    }
    const void* srcs[64];
    if (l.srcs.size() > 64) return InternalError(what_ + ": reduction of more than 64 sources");
    for (size_t i = 0; i < l.srcs.size(); ++i) srcs[i] = Ptr(l.srcs[i]);
    TUTTI_RETURN_IF_ERROR(kernels::ReduceN(dst, srcs, static_cast<int>(l.srcs.size()), l.dst.count, type_, op_));
  }
  return OkStatus();
}

void CollectiveRun::Finish(Status st) {
  if (done_.load()) return;
  status_ = std::move(st);
  done_.store(true, std::memory_order_release);
}

bool CollectiveRun::Advance() {
  if (done()) return true;
  std::unique_lock<std::mutex> lock(mu_, std::try_to_lock);
  if (!lock.owns_lock()) return done();
  if (done()) return true;
  engine_->Poll();
  bool all_done = true;
  for (size_t s = 0; s < streams_.size(); ++s) {
    StreamState& st = streams_[s];
    const auto& steps = schedule_.streams[s].steps;
    while (st.step < steps.size()) {
      if (!st.posted) {
        Status ps = PostStep(s);
        if (!ps.ok()) {
          Finish(ps.WithContext(what_));
          return true;
        }
      }
      bool step_done = true;
      for (const auto& op : st.ops) {
        if (!op->done.load(std::memory_order_acquire)) {
          step_done = false;
          break;
        }
        if (!op->status.ok()) {
          Finish(op->status.WithContext(what_));
          return true;
        }
      }
      if (!step_done) break;
      Status ls = RunLocals(steps[st.step]);
      if (!ls.ok()) {
        Finish(ls.WithContext(what_));
        return true;
      }
      ++st.step;
      st.posted = false;
      steps_done_.fetch_add(1, std::memory_order_relaxed);
    }
    if (st.step < steps.size()) all_done = false;
  }
  if (all_done) Finish(finalize_ ? finalize_().WithContext(what_) : OkStatus());
  return done();
}

Status CollectiveRun::status() const {
  if (!done()) return InvalidUsage(what_ + ": not complete");
  return status_;
}

void CollectiveRun::Fail(const Status& why) {
  std::lock_guard<std::mutex> lock(mu_);
  Finish(why);
}

std::string CollectiveRun::Progress() const {
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t s = 0; s < streams_.size(); ++s) {
    const StreamState& st = streams_[s];
    const auto& steps = schedule_.streams[s].steps;
    if (st.step >= steps.size()) continue;
    std::string waiting;
    for (const auto& op : st.ops)
      if (!op->done.load()) waiting += (waiting.empty() ? "" : ", ") + std::string(op->kind == Op::Kind::kSend ? "sending to rank " : "receiving from rank ") + std::to_string(op->peer);
    std::string foreign;
    for (int peer : engine_->PeersWithForeignMessages(Tag(s), sig_))
      foreign += (foreign.empty() ? "" : ", ") + std::to_string(peer);
    if (!foreign.empty())
      foreign = "; rank(s) " + foreign +
                " sent messages of a different call in this position: the ranks called different collectives, "
                "counts, types, ops or roots";
    return "stream " + std::to_string(s) + " at step " + std::to_string(st.step + 1) + " of " +
           std::to_string(steps.size()) + (waiting.empty() ? "" : ", " + waiting) + foreign;
  }
  return "finishing";
}

}  // namespace tutti
