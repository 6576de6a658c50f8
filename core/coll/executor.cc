#include "core/coll/executor.h"

#include "core/base/logging.h"

namespace tutti {

CollectiveRun::CollectiveRun(std::shared_ptr<P2PEngine> engine, std::shared_ptr<exec::LocalEngine> local,
                             std::shared_ptr<const algo::Schedule> schedule, CollBuffers bufs,
                             std::shared_ptr<char> scratch, DataType type, RedOp op, uint32_t sig, uint64_t seq,
                             CollLabel label, CollLocalWork extra, CollStaging staging)
    : engine_(std::move(engine)),
      local_(std::move(local)),
      schedule_(std::move(schedule)),
      bufs_(bufs),
      scratch_(std::move(scratch)),
      type_(type),
      op_(op),
      elem_(DataTypeSize(type)),
      sig_(sig),
      seq_(seq),
      label_(std::move(label)),
      extra_(std::move(extra)),
      staging_(staging),
      streams_(schedule_->streams.size()) {}

std::string CollectiveRun::what() const {
  return std::string(label_.name != nullptr ? label_.name : "collective") + " #" + std::to_string(seq_) + " (" +
         (label_.desc ? *label_.desc : "") + ")";
}

CollectiveRun::~CollectiveRun() {
  std::lock_guard<std::mutex> lock(mu_);
  DrainLocals();  // tasks still running would write into buffers `extra_.keep` holds
}

Status CollectiveRun::Validate() const {
  if (schedule_->streams.size() > static_cast<size_t>(kMaxStreams))
    return InternalError(what() + ": schedule has " + std::to_string(schedule_->streams.size()) + " streams");
  auto check = [&](const algo::Region& r, bool writes) -> Status {
    uint64_t size = r.buf == algo::Buf::kInput    ? bufs_.input_count
                    : r.buf == algo::Buf::kOutput ? bufs_.output_count
                                                  : schedule_->scratch_count;
    if (writes && r.buf == algo::Buf::kInput) return InternalError(what() + ": schedule writes the input");
    if (r.offset > size || r.count > size - r.offset)
      return InternalError(what() + ": schedule region [" + std::to_string(r.offset) + ", +" + std::to_string(r.count) +
                           ") outside a buffer of " + std::to_string(size) + " elements");
    if (r.count > 0 && r.buf == algo::Buf::kInput && bufs_.input == nullptr)
      return InternalError(what() + ": schedule reads a missing input");
    if (r.count > 0 && r.buf == algo::Buf::kScratch && scratch_ == nullptr)
      return InternalError(what() + ": schedule uses scratch that was not provided");
    return OkStatus();
  };
  for (const auto& stream : schedule_->streams)
    for (const auto& step : stream.steps) {
      for (const auto& t : step.recvs) TUTTI_RETURN_IF_ERROR(check(t.region, true));
      for (const auto& t : step.sends) TUTTI_RETURN_IF_ERROR(check(t.region, false));
      for (const auto& l : step.locals) {
        TUTTI_RETURN_IF_ERROR(check(l.dst, true));
        if (l.srcs.empty()) return InternalError(what() + ": local operation without sources");
        for (const auto& src : l.srcs) {
          TUTTI_RETURN_IF_ERROR(check(src, false));
          if (src.count != l.dst.count) return InternalError(what() + ": local operation with uneven counts");
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

char* CollectiveRun::MsgPtr(const algo::Region& r) const {
  if (!staging_.enabled) return Ptr(r);
  char* base = r.buf == algo::Buf::kInput    ? staging_.input
               : r.buf == algo::Buf::kOutput ? staging_.output
                                             : staging_.scratch;
  return base == nullptr ? nullptr : base + r.offset * elem_;
}

Status CollectiveRun::PostStaging(const std::vector<algo::Transfer>& transfers, bool to_mirror, Tickets* t) {
  for (const auto& x : transfers) {
    if (x.region.count == 0) continue;
    char* dev = Ptr(x.region);
    char* mirror = MsgPtr(x.region);
    if (dev == nullptr || mirror == nullptr) return InternalError(what() + ": staging of a missing buffer");
    TUTTI_RETURN_IF_ERROR(Post(to_mirror ? exec::LocalTask::Copy(mirror, dev, x.region.count, type_)
                                         : exec::LocalTask::Copy(dev, mirror, x.region.count, type_),
                               t));
  }
  return OkStatus();
}

int CollectiveRun::Tag(size_t stream) const {
  return -1 - static_cast<int>(((seq_ & 0xFFFFF) << 10) + stream);
}

Status CollectiveRun::PostStep(size_t s) {
  StreamState& st = streams_[s];
  const algo::Step& step = schedule_->streams[s].steps[st.step];
  st.ops.clear();
  for (const auto& t : step.recvs) {
    TUTTI_ASSIGN_OR_RETURN(auto op, engine_->PostRecv(MsgPtr(t.region), t.region.count * elem_, t.peer, Tag(s), sig_,
                                                      copy_recvs_));
    st.ops.push_back(std::move(op));
  }
  for (const auto& t : step.sends) {
    TUTTI_ASSIGN_OR_RETURN(auto op, engine_->PostSend(MsgPtr(t.region), t.region.count * elem_, t.peer, Tag(s), sig_));
    st.ops.push_back(std::move(op));
  }
  return OkStatus();
}

Status CollectiveRun::Post(const exec::LocalTask& task, Tickets* t) {
  Result<uint64_t> ticket = local_->Post(task);
  if (!ticket.ok()) return ticket.status();
  if (t->empty()) t->first = *ticket;
  t->last = *ticket;
  return OkStatus();
}

Status CollectiveRun::PostLocals(const algo::Step& step, Tickets* t) {
  for (const auto& l : step.locals) {
    if (l.dst.count == 0) continue;
    if (l.kind == algo::LocalOp::Kind::kCopy) {
      const char* src = Ptr(l.srcs[0]);
      char* dst = Ptr(l.dst);
      if (src != dst) TUTTI_RETURN_IF_ERROR(Post(exec::LocalTask::Copy(dst, src, l.dst.count, type_), t));
      continue;
    }
    if (l.srcs.size() > static_cast<size_t>(exec::LocalTask::kMaxSrcs))
      return InternalError(what() + ": reduction of more than " + std::to_string(exec::LocalTask::kMaxSrcs) + " sources");
    exec::LocalTask task = exec::LocalTask::Reduce(Ptr(l.dst), nullptr, 0, l.dst.count, type_, op_);
    task.nsrc = static_cast<int>(l.srcs.size());
    for (size_t i = 0; i < l.srcs.size(); ++i) task.srcs[i] = Ptr(l.srcs[i]);
    TUTTI_RETURN_IF_ERROR(Post(task, t));
  }
  return OkStatus();
}

bool CollectiveRun::LocalsDone(const Tickets& t, Status* st) {
  if (t.empty()) return true;
  return local_->Test(t.first, t.last, st);
}

void CollectiveRun::DrainLocals() {
  auto drain = [&](const Tickets& t) {
    if (t.empty()) return;
    // Local work is bounded (no message involved), so this wait ends; the limit is a backstop.
    Status st = local_->Wait(t.first, t.last, 600);
    if (st.code() == Code::kTimeout) TUTTI_LOG(Error, Coll, "%s: %s", what().c_str(), st.message().c_str());
  };
  drain(extra_tickets_);
  for (const StreamState& st : streams_) drain(st.tickets);
}

void CollectiveRun::Finish(Status st) {
  if (done_.load()) return;
  if (!st.ok()) DrainLocals();
  status_ = std::move(st);
  done_.store(true, std::memory_order_release);
}

bool CollectiveRun::AdvanceStreams(Status* err) {
  bool all_done = true;
  auto local_failed = [&](const Status& why) {
    *err = why;
    local_failure_ = true;
    return false;
  };
  for (size_t s = 0; s < streams_.size(); ++s) {
    StreamState& st = streams_[s];
    const auto& steps = schedule_->streams[s].steps;
    while (st.step < steps.size()) {
      const algo::Step& step = steps[st.step];
      Status ls;
      switch (st.phase) {
        case StepPhase::kStart:
          st.tickets = {};
          if (staging_.enabled)
            if (Status ps = PostStaging(step.sends, /*to_mirror=*/true, &st.tickets); !ps.ok()) return local_failed(ps);
          st.phase = StepPhase::kStageOut;
          [[fallthrough]];
        case StepPhase::kStageOut:
          if (!LocalsDone(st.tickets, &ls)) goto next_stream;
          if (!ls.ok()) return local_failed(ls);
          if (Status ps = PostStep(s); !ps.ok()) {
            *err = ps;
            return false;
          }
          st.phase = StepPhase::kMessages;
          [[fallthrough]];
        case StepPhase::kMessages:
          for (const auto& op : st.ops) {
            if (!op->done.load(std::memory_order_acquire)) goto next_stream;
            if (!op->status.ok()) {
              *err = op->status;
              return false;
            }
          }
          st.tickets = {};
          if (staging_.enabled)
            if (Status ps = PostStaging(step.recvs, /*to_mirror=*/false, &st.tickets); !ps.ok()) return local_failed(ps);
          if (Status ps = PostLocals(step, &st.tickets); !ps.ok()) return local_failed(ps);
          st.phase = StepPhase::kLocals;
          [[fallthrough]];
        case StepPhase::kLocals:
          if (!LocalsDone(st.tickets, &ls)) goto next_stream;
          if (!ls.ok()) return local_failed(ls);
          st.tickets = {};
          st.phase = StepPhase::kStart;
          ++st.step;
          steps_done_.fetch_add(1, std::memory_order_relaxed);
      }
    }
  next_stream:
    if (st.step < steps.size()) all_done = false;
  }
  return all_done;
}

bool CollectiveRun::Advance() {
  if (done()) return true;
  // A local task that failed leaves the peers waiting for this rank's messages: tell them,
  // after the run's lock is released (declared first, so it runs last).
  struct NotifyPeers {
    CollectiveRun* run;
    Status why;
    ~NotifyPeers() {
      if (!why.ok()) run->engine_->FailAndNotify(why);
    }
  } notify{this, OkStatus()};
  std::unique_lock<std::mutex> lock(mu_, std::try_to_lock);
  if (!lock.owns_lock()) return done();
  if (done()) return true;
  // What the engine learned since the last look; before a run's first posts, what arrived
  // meanwhile: data it then takes at once, or a peer's word that the communicator failed, which
  // fails the call before it sends anything. (Posting polls only the connection posted to.)
  engine_->Poll();
  Status st;
  auto fail = [&](const Status& why, bool local) {
    Finish(why.WithContext(what()));
    if (local || local_failure_) notify.why = status_;
    return true;
  };
  switch (phase_) {
    case Phase::kStart:
      for (const auto& task : extra_.before)
        if (Status ps = Post(task, &extra_tickets_); !ps.ok()) return fail(ps, true);
      phase_ = Phase::kBefore;
      [[fallthrough]];
    case Phase::kBefore:
      if (!LocalsDone(extra_tickets_, &st)) return false;
      if (!st.ok()) return fail(st, true);
      extra_tickets_ = {};
      phase_ = Phase::kStreams;
      [[fallthrough]];
    case Phase::kStreams:
      if (!AdvanceStreams(&st)) {
        if (!st.ok()) return fail(st, false);
        return false;
      }
      for (const auto& task : extra_.after)
        if (Status ps = Post(task, &extra_tickets_); !ps.ok()) return fail(ps, true);
      phase_ = Phase::kAfter;
      [[fallthrough]];
    case Phase::kAfter:
      if (!LocalsDone(extra_tickets_, &st)) return false;
      if (!st.ok()) return fail(st, true);
      extra_tickets_ = {};
      Finish(OkStatus());
      return true;
  }
  return done();
}

Status CollectiveRun::status() const {
  if (!done()) return InvalidUsage(what() + ": not complete");
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
    const auto& steps = schedule_->streams[s].steps;
    if (st.step >= steps.size()) continue;
    if (st.phase == StepPhase::kStageOut || st.phase == StepPhase::kLocals)
      return "stream " + std::to_string(s) + " at step " + std::to_string(st.step + 1) + " of " +
             std::to_string(steps.size()) + ", local " +
             (st.phase == StepPhase::kStageOut ? "staging copies" : "operations") + " running on " + local_->name();
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
  if (phase_ == Phase::kBefore) return "preparing the input on " + local_->name();
  if (phase_ == Phase::kAfter) return "finishing the output on " + local_->name();
  return "finishing";
}

}  // namespace tutti
