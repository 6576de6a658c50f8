#include "core/coll/slot_run.h"

#include <sched.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "core/base/deadline.h"
#include "kernels/cpu/reduce.h"

namespace tutti {

using algo::Collective;

namespace {

using slot_call::PerRankBlocks;
using slot_call::Reduces;

std::string DescText(const SlotDesc& d, bool with_round = true, const char* how = "", uint64_t seq = 0) {
  if (d.fill) {
    SlotDesc whole = d;
    whole.fill = false;
    return "slot space inside a round of " + DescText(whole, with_round, how, seq) +
           " (its earlier calls took more or less slot space than this rank's)";
  }
  const int coll = d.coll, type = d.type, op = d.op;
  if (coll > static_cast<int>(Collective::kBarrier)) return "an unknown call (code " + std::to_string(coll) + ")";
  const auto c = static_cast<Collective>(coll);
  std::string s = algo::CollectiveName(c);
  if (seq > 0) s += " #" + std::to_string(seq);
  if (c == Collective::kBarrier) return s + (*how ? " (slots)" : "");
  s += std::string(" (") + how + "count " + std::to_string(d.count) + ", " + DataTypeName(static_cast<DataType>(type));
  if (Reduces(c)) s += std::string(", ") + (op < kNumRedOps ? RedOpName(static_cast<RedOp>(op)) : "op ?");
  if (c == Collective::kBroadcast || c == Collective::kReduce || c == Collective::kScatter || c == Collective::kGather)
    s += ", root " + std::to_string(d.root);
  if (!with_round) return s + ")";
  return s + ", round " + std::to_string(d.part + 1) + " of " + std::to_string(d.parts) + ")";
}

}  // namespace

SlotRun::SlotRun(std::shared_ptr<SlotChannel> channel, const SlotCall& call, uint64_t chunk, uint64_t seq,
                 std::shared_ptr<void> keep)
    : channel_(std::move(channel)),
      call_(call),
      chunk_(chunk),
      rounds_(SlotRounds(call, chunk)),
      seq_(seq),
      keep_(std::move(keep)),
      elem_(DataTypeSize(call.type)),
      n_(channel_->nranks()),
      me_(channel_->rank()) {
  const Collective c = call_.coll;
  const bool root = me_ == call_.root;
  wait_lo_ = 0;
  wait_hi_ = n_;
  if (!call_.strict && c != Collective::kBarrier) {
    if (((c == Collective::kBroadcast || c == Collective::kScatter) && root) ||
        ((c == Collective::kReduce || c == Collective::kGather) && !root)) {
      wait_hi_ = 0;
    } else if (c == Collective::kBroadcast || c == Collective::kScatter) {
      wait_lo_ = call_.root;
      wait_hi_ = call_.root + 1;
    }
  }
  // What ReduceN would check, once per call: the slots are aligned and distinct, the type and op
  // were checked with the call (avg and premul_sum reduce as sum), an input overlapping the output
  // other than in place was copied; the alignment of the output and input (a reduce_scatter
  // reads its own block there) is left.
  auto aligned = [&](const char* p) { return (reinterpret_cast<uintptr_t>(p) & (elem_ - 1)) == 0; };  // (sizes: 2^k)
  prechecked_ = aligned(call_.output) && aligned(call_.input);
  released_ = !(call_.direct && Writes());
  desc_ = SlotCallDesc(call_, rounds_);
  desc_.trail = channel_->Chain(desc_);
  // The call's units, from where the last call's end.
  const uint32_t first = channel_->next_unit();
  uint32_t pos = first;
  for (uint32_t part = 0; part < rounds_; ++part) {
    const SlotChannel::Span sp = channel_->Place(pos, RoundBytes(part));
    if (part == 0) wspan_ = rspan_ = sp;
    pos = sp.end + 1;
  }
  channel_->Reserve(pos - first);
}

uint64_t SlotRun::Elems(uint32_t part) const {
  const uint64_t lo = static_cast<uint64_t>(part) * chunk_;
  return call_.count > lo ? std::min(chunk_, call_.count - lo) : 0;
}

// The same on every rank (every rank gives the round the same units), also where a rank writes
// no data (a non-root of broadcast and scatter).
uint64_t SlotRun::RoundBytes(uint32_t part) const {
  if (call_.coll == Collective::kBarrier || call_.direct) return 0;
  return Elems(part) * elem_ * (PerRankBlocks(call_.coll) ? static_cast<uint64_t>(n_) : 1);
}

// This rank's own data never goes through its slot (it reads it from its input) where nobody
// else reads it there, unless premul_sum scales what is written: its own block of a
// reduce_scatter or all_to_all, a scatter's or gather's root's block, a reduce's root's input.
bool SlotRun::OwnDirect() const {
  const bool root = me_ == call_.root;
  switch (call_.coll) {
    case Collective::kReduceScatter: return call_.op != RedOp::kPremulSum;
    case Collective::kReduce: return root && call_.op != RedOp::kPremulSum;
    case Collective::kAllToAll: return true;
    case Collective::kScatter:
    case Collective::kGather: return root;
    default: return false;
  }
}

bool SlotRun::Writes() const {
  switch (call_.coll) {
    case Collective::kBroadcast:
    case Collective::kScatter: return me_ == call_.root;
    case Collective::kReduce:
    case Collective::kGather: return !OwnDirect();  // (the root reads its own input)
    case Collective::kBarrier: return false;
    default: return true;
  }
}

SlotDesc SlotRun::DescOf(uint32_t part) const {
  SlotDesc d = desc_;
  d.part = part;
  return d;
}

Status SlotRun::Write(uint32_t part, const SlotChannel::Span& sp) {
  const uint64_t lo = static_cast<uint64_t>(part) * chunk_;
  const uint64_t m = Elems(part);
  if (call_.direct) {
    if (Writes()) channel_->SetAddress(sp.data, call_.input);
  } else if (Writes() && m > 0) {
    char* dst = channel_->MySlot(sp.data, RoundBytes(part));
    const bool scale = call_.op == RedOp::kPremulSum && Reduces(call_.coll);
    const int blocks = PerRankBlocks(call_.coll) ? n_ : 1;
    for (int b = 0; b < blocks; ++b) {
      if (b == me_ && OwnDirect()) continue;  // this rank takes its own block from its input
      const char* src = call_.input + (static_cast<uint64_t>(b) * call_.count + lo) * elem_;
      char* to = dst + static_cast<uint64_t>(b) * m * elem_;
      if (scale) {
        TUTTI_RETURN_IF_ERROR(kernels::ScaleBy(to, src, m, call_.type, call_.premul_scalar));
      } else {
        std::memcpy(to, src, m * elem_);
      }
    }
  }
  channel_->Publish(sp, DescOf(part), /*wake=*/false);  // Advance wakes once for all it moved
  return OkStatus();
}

Status SlotRun::Read(uint32_t part, uint32_t s) {
  if (call_.direct) return ReadDirect(s);
  const uint64_t lo = static_cast<uint64_t>(part) * chunk_;
  const uint64_t m = Elems(part);
  if (m == 0 || call_.output == nullptr) return OkStatus();
  if ((call_.coll == Collective::kReduce || call_.coll == Collective::kGather) && me_ != call_.root) return OkStatus();
  char* out = call_.output + lo * elem_;
  const uint64_t bytes = RoundBytes(part);
  // This rank's own block (the collectives with a block per rank) or chunk, in its input.
  const char* own = call_.input == nullptr ? nullptr
                    : call_.input + ((PerRankBlocks(call_.coll) ? static_cast<uint64_t>(me_) * call_.count : 0) + lo) * elem_;
  auto copy = [](char* to, const char* from, uint64_t len) {
    if (to != from) std::memcpy(to, from, len);  // (in place: the own block is already there)
  };
  const RedOp op = (call_.op == RedOp::kAvg || call_.op == RedOp::kPremulSum) ? RedOp::kSum : call_.op;
  auto reduce = [&](uint64_t offset) -> Status {
    std::array<const void*, 32> small;
    std::vector<const void*> big;
    const void** srcs = small.data();
    if (n_ > static_cast<int>(small.size())) {
      big.resize(n_);
      srcs = big.data();
    }
    for (int p = 0; p < n_; ++p) srcs[p] = channel_->PeerSlot(p, s, bytes) + offset;
    if (OwnDirect()) srcs[me_] = own;
    TUTTI_RETURN_IF_ERROR(prechecked_ ? kernels::ReduceNPrechecked(out, srcs, n_, m, call_.type, op)
                                      : kernels::ReduceN(out, srcs, n_, m, call_.type, op));
    if (call_.op == RedOp::kAvg) TUTTI_RETURN_IF_ERROR(kernels::DivideBy(out, m, call_.type, n_));
    return OkStatus();
  };
  switch (call_.coll) {
    case Collective::kAllReduce:
    case Collective::kReduce: return reduce(0);
    case Collective::kReduceScatter: return reduce(static_cast<uint64_t>(me_) * m * elem_);
    case Collective::kBroadcast:
      if (me_ != call_.root) {
        std::memcpy(out, channel_->PeerSlot(call_.root, s, bytes), m * elem_);
      } else if (call_.input + lo * elem_ != out) {
        std::memcpy(out, call_.input + lo * elem_, m * elem_);
      }
      return OkStatus();
    case Collective::kScatter:
      copy(out, me_ == call_.root ? own : channel_->PeerSlot(call_.root, s, bytes) + static_cast<uint64_t>(me_) * m * elem_,
           m * elem_);
      return OkStatus();
    case Collective::kAllGather:
    case Collective::kGather:
    case Collective::kAllToAll: {
      const uint64_t from = call_.coll == Collective::kAllToAll ? static_cast<uint64_t>(me_) * m * elem_ : 0;
      for (int p = 0; p < n_; ++p)
        copy(call_.output + (static_cast<uint64_t>(p) * call_.count + lo) * elem_,
             p == me_ ? own : channel_->PeerSlot(p, s, bytes) + from, m * elem_);
      return OkStatus();
    }
    case Collective::kBarrier: return OkStatus();
  }
  return OkStatus();
}

// A direct call's one round: blocks are copied from the writers' buffers at the addresses their
// headers give.
Status SlotRun::ReadDirect(uint32_t s) {
  const Collective c = call_.coll;
  const uint64_t block = call_.count * elem_;
  if (block == 0 || call_.output == nullptr || (c == Collective::kGather && me_ != call_.root)) return OkStatus();
  char* out = call_.output;
  const char* own = call_.input == nullptr
                        ? nullptr
                        : call_.input + (PerRankBlocks(c) ? static_cast<uint64_t>(me_) * block : 0);
  if (c == Collective::kBroadcast) {
    if (me_ != call_.root) return channel_->ReadPeer(call_.root, out, channel_->AddressOf(call_.root, s), block);
    if (out != call_.input) std::memcpy(out, call_.input, block);
    return OkStatus();
  }
  if (c == Collective::kScatter) {
    if (me_ != call_.root) {
      const uint64_t from = channel_->AddressOf(call_.root, s) + static_cast<uint64_t>(me_) * block;
      return channel_->ReadPeer(call_.root, out, from, block);
    }
    if (out != own) std::memcpy(out, own, block);
    return OkStatus();
  }
  // all_gather, gather's root, all_to_all: block p of the output from rank p.
  const uint64_t from = c == Collective::kAllToAll ? static_cast<uint64_t>(me_) * block : 0;
  for (int p = 0; p < n_; ++p) {
    char* to = out + static_cast<uint64_t>(p) * block;
    if (p == me_) {
      if (to != own) std::memcpy(to, own, block);
      continue;
    }
    TUTTI_RETURN_IF_ERROR(channel_->ReadPeer(p, to, channel_->AddressOf(p, s) + from, block));
  }
  return OkStatus();
}

bool SlotRun::ReadsMine(int p) const {
  if (p == me_) return false;
  switch (call_.coll) {
    case Collective::kGather: return p == call_.root;
    case Collective::kScatter:
    case Collective::kBroadcast: return me_ == call_.root;
    default: return true;  // all_gather, all_to_all
  }
}

// The writer's buffer is free once every rank that reads it finished the round. Fails where one
// of them will not: it gave up on the round, or it marked the area failed without finishing it
// (or this rank did: its readers then fail the round too, seeing that it gave it up).
bool SlotRun::Released(Status* st) const {
  const uint32_t end = rspan_.end;
  bool all = true;
  for (int p = 0; p < n_ && all; ++p)
    if (ReadsMine(p) && static_cast<int32_t>(channel_->FinishedBy(p) - end) < 0) all = false;
  if (all) return true;
  const int f = channel_->FailedBy();
  if (f < 0) return false;
  if (f == me_) {
    *st = SelfFailed();
  } else if (static_cast<int32_t>(channel_->FinishedBy(f) - end) < 0) {
    *st = FailedRank(f);
  } else {
    for (int p = 0; p < n_; ++p)
      if (ReadsMine(p) && channel_->GaveUp(p, rspan_.start)) *st = FailedRank(p);
  }
  return false;
}

std::unique_lock<std::mutex> SlotRun::Lock() const {
  return solo_ ? std::unique_lock<std::mutex>() : std::unique_lock<std::mutex>(channel_->mu());
}

bool SlotRun::Advance() {
  if (done()) return true;
  auto lock = Lock();
  if (done()) return true;
  bool moved = false;
  Status st;
  while (st.ok() && written_ < rounds_ && channel_->Writable(wspan_.end)) {
    st = Write(written_, wspan_);
    if (++written_ < rounds_) wspan_ = channel_->Place(wspan_.end + 1, RoundBytes(written_));
    moved = true;
  }
  while (st.ok() && read_ < written_ && channel_->finished() + 1 == rspan_.start) {
    const uint32_t s = rspan_.data;
    if (!AllArrived(s)) {
      // Arrivals are looked at again after a failure was seen: a rank may have published, found
      // a mismatch and marked the failure since we first looked.
      const int f = channel_->FailedBy();
      if (f < 0 || !AllArrived(s)) {
        if (f >= 0) st = MissingAfterFailure(f, s);  // OK: the headers may still come
        break;
      }
    }
    st = Compare(read_, s);
    if (st.ok() && channel_->FailedBy() >= 0) st = ArrivedAfterFailure(s);
    if (st.ok()) st = Read(read_, s);
    // (Direct: a writer that gave up on the round may have let go of its buffer while we read.)
    if (st.ok() && call_.direct && channel_->FailedBy() >= 0) st = ArrivedAfterFailure(s);
    if (!st.ok()) break;
    channel_->Finish(rspan_.end, /*wake=*/false);
    if (++read_ < rounds_) rspan_ = channel_->Place(rspan_.end + 1, RoundBytes(read_));
    moved = true;
  }
  if (moved) {
    channel_->Wake();
    // (Only the thread that holds the lock or runs solo writes it: no read-modify-write needed.)
    moves_.store(moves_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  awaited_.store(read_ < written_ ? rspan_.data : 0, std::memory_order_relaxed);
  blocked_.store(read_ < rounds_ && channel_->finished() + 1 != rspan_.start, std::memory_order_relaxed);
  if (st.ok() && read_ == rounds_ && !released_) released_ = Released(&st);
  if (!st.ok()) {
    FinishLocked(st.WithContext("rank " + std::to_string(me_) + ": " + what()));
  } else if (read_ == rounds_ && released_) {
    FinishLocked(OkStatus());
  }
  return done();
}

// A header this rank waits for is missing and a rank marked the area failed. Fails the round
// where the header may never come: this rank's own communicator failed (a dead peer, a timeout:
// its reason says which), the marker failed before it finished the round, or the missing rank
// gave up on it. Otherwise (the marker finished the round, e.g. a rank that left after the call)
// the header may still come, and if not, the failure reaches this rank's engine.
Status SlotRun::MissingAfterFailure(int f, uint32_t s) const {
  if (f == me_) return SelfFailed();
  if (static_cast<int32_t>(channel_->FinishedBy(f) - s) < 0) return FailedRank(f);
  for (int p = wait_lo_; p < wait_hi_; ++p)
    if (!channel_->Arrived(p, s) && channel_->GaveUp(p, s)) return FailedRank(p);
  return OkStatus();
}

// Every header this rank waits for is here, and a rank marked the area failed. The round
// completes (the data is in the slots, and nobody overwrites a unit this rank has not finished):
// a peer that finished the call and exited may have been found dead while this rank was off its
// core, and the call must not fail then. Unless a rank gave up on the round (failed the call):
// then this rank fails it too (as do the peers that had not completed it when it gave up). A
// round in which this rank waits for nobody (a broadcast's root, a reduce's non-root) learns
// nothing from headers: it fails as soon as a rank that had not finished the round marked the
// area, or this rank did.
Status SlotRun::ArrivedAfterFailure(uint32_t s) const {
  for (int p = 0; p < n_; ++p)
    if (p != me_ && channel_->GaveUp(p, s)) return FailedRank(p);
  if (wait_lo_ < wait_hi_) return OkStatus();
  const int f = channel_->FailedBy();
  if (f == me_) return SelfFailed();
  if (f >= 0 && static_cast<int32_t>(channel_->FinishedBy(f) - s) < 0) return FailedRank(f);
  return OkStatus();
}

Status SlotRun::SelfFailed() const {
  const std::string why = channel_->FailureReason();
  return AbortedError("this rank's communicator failed" + (why.empty() ? std::string() : ": " + why));
}

Status SlotRun::FailedRank(int f) const {
  const std::string why = channel_->FailureReason();
  const int first = channel_->FailedBy();
  std::string text = "rank " + std::to_string(f) + "'s communicator failed or was destroyed before it finished this call";
  if (first != f && first >= 0) text += "; rank " + std::to_string(first) + " failed first";
  return RemoteError(text + (why.empty() ? std::string(" (its error says why)") : ": " + why));
}

bool SlotRun::AllArrived(uint32_t s) const {
  for (int p = wait_lo_; p < wait_hi_; ++p)
    if (!channel_->Arrived(p, s)) return false;
  return true;
}

Status SlotRun::Compare(uint32_t part, uint32_t s) {
  const SlotDesc mine = DescOf(part);
  for (int p = wait_lo_; p < wait_hi_; ++p) {
    if (p == me_) continue;
    const SlotDesc theirs = channel_->Desc(p, s);
    if (theirs != mine) return Mismatch(p, mine, theirs);
    channel_->Agreed(p, seq_);
  }
  return OkStatus();
}

Status SlotRun::Mismatch(int p, const SlotDesc& mine, const SlotDesc& theirs) const {
  if (!theirs.SameCall(mine))
    return MismatchError("ranks called different collectives, counts, types, ops or roots in the same position: "
                         "this rank called " + DescText(mine) + " where rank " + std::to_string(p) + " called " +
                         DescText(theirs));
  // Equal trails at the last call they compared: a call since then differed.
  const uint64_t agreed = channel_->AgreedWith(p);
  const std::string last = agreed == 0 ? " have not compared a call before"
                                       : " last compared their calls at #" + std::to_string(agreed);
  const std::string which = agreed + 1 >= seq_ - 1 ? "call #" + std::to_string(seq_ - 1)
                                                   : "one of calls #" + std::to_string(agreed + 1) + " to #" +
                                                         std::to_string(seq_ - 1);
  return MismatchError(
      "ranks called different collectives, counts, types, ops or roots earlier: rank " + std::to_string(p) +
      " and this rank" + last + ", and " + which + " of this rank was not what rank " + std::to_string(p) +
      " called in that position (calls in which neither rank takes the other's data, as a rooted call between "
      "two non-roots or an empty call, are compared at the next call that connects the two; "
      "TUTTI_STRICT_CHECKS=1 compares every call as it runs)");
}

std::string SlotRun::what() const {
  return DescText(DescOf(0), false, call_.direct ? "direct slots, " : "slots, ", seq_);
}

std::string SlotCallText(const SlotCall& c, uint64_t seq) {
  SlotDesc d;
  d.coll = static_cast<uint8_t>(c.coll);
  d.type = static_cast<uint8_t>(c.type);
  d.op = static_cast<uint8_t>(c.op);
  d.root = c.root;
  d.count = c.count;
  return DescText(d, false, "slots, ", seq);
}

bool SlotRun::Worth() const {
  if (done()) return true;
  const uint32_t s = awaited_.load(std::memory_order_relaxed);
  if (s == 0 || AllArrived(s)) return true;
  return channel_->FailedBy() >= 0;
}

bool SlotRun::Blocked() const { return !done() && blocked_.load(std::memory_order_relaxed); }

void SlotRun::FinishLocked(Status st) {
  // A failed call: peers that have this round's headers fail it too (see ArrivedAfterFailure).
  if (!st.ok() && (read_ < rounds_ || !released_)) channel_->GiveUp(rspan_.start);
  status_ = std::move(st);
  done_.store(true, std::memory_order_release);
}

Status SlotRun::status() const {
  auto lock = Lock();
  return status_;
}

void SlotRun::Fail(const Status& why) {
  auto lock = Lock();
  if (!done()) FinishLocked(why);
}

std::string SlotRun::Progress() const {
  auto lock = Lock();
  if (read_ >= rounds_ && !released_) {
    std::string readers;
    for (int p = 0; p < n_; ++p)
      if (ReadsMine(p) && static_cast<int32_t>(channel_->FinishedBy(p) - rspan_.end) < 0)
        readers += (readers.empty() ? "rank " : ", rank ") + std::to_string(p) + " (finished unit " +
                   std::to_string(channel_->FinishedBy(p)) + ")";
    return "waiting for " + readers + " to finish slot unit " + std::to_string(rspan_.end) +
           ", reading this rank's buffer";
  }
  if (read_ >= rounds_) return "finished";
  const SlotChannel::Span& sp = rspan_;
  const uint32_t s = sp.data;
  std::string text = "round " + std::to_string(read_ + 1) + " of " + std::to_string(rounds_) + " (slot unit " +
                     std::to_string(s) + (sp.end != s ? " to " + std::to_string(sp.end) : std::string()) + ")";
  if (read_ == written_) {
    const uint32_t need = wspan_.end - static_cast<uint32_t>(channel_->units());
    return text + ": waiting until every rank finished slot unit " + std::to_string(need) +
           " or later so this rank may write";
  }
  std::string missing;
  for (int p = wait_lo_; p < wait_hi_; ++p) {
    if (channel_->Arrived(p, s)) continue;
    missing += (missing.empty() ? "" : "; ") + std::string("rank ") + std::to_string(p) + " (published slot unit " +
               std::to_string(channel_->PublishedBy(p, s)) + " there, finished unit " +
               std::to_string(channel_->FinishedBy(p)) + ")";
  }
  if (missing.empty()) return text + ": waiting for an earlier call of this rank";
  return text + ": waiting for " + missing + "; ranks that called different collectives here, or the same one "
                                             "with sizes on both sides of TUTTI_SLOT_MAX, would wait like this";
}

Status FinishSlotRun(SlotRun& run, P2PEngine& engine) {
  Status st = run.status();
  // The ranks' rounds no longer line up: nothing later could go through the slots safely.
  if (!st.ok()) engine.FailAndNotify(st);
  return st;
}

int SlotSpinUs(const SlotRun& run, const SlotWaitEnv& env) {
  const auto [lo, hi] = run.Awaited();
  return SpinUsBeside(run.channel(), lo, hi, env.spin_us, env.spread);
}

Status WaitSlotRun(SlotRun& run, const SlotWaitEnv& env, double timeout_s) {
  using Clock = std::chrono::steady_clock;
  if (run.Advance()) return FinishSlotRun(run, *env.engine);
  // A peer a few hundred nanoseconds behind: caught before any clock or waiter bookkeeping.
  for (int i = 0; i < 16 && env.spin_us > 0; ++i) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
    if (run.Worth() && run.Advance()) return FinishSlotRun(run, *env.engine);
  }
  if (timeout_s < 0) timeout_s = env.default_timeout_s;
  const auto start = Clock::now();
  const auto deadline = start + WaitDuration(timeout_s);
  P2PEngine::WaiterScope waiting(env.engine);  // the progress thread keeps out of the way
  SlotChannel& ch = run.channel();
  // No spinning while a rank we wait for shares our CPU: yielding lets it run (SlotSpinUs).
  const int spin_us = SlotSpinUs(run, env);
  auto since = start, checked = start;
  int nap_us = 20;
  while (true) {
    // Poll a while before looking at the clock (reading it costs as much as a poll).
    const uint64_t before = run.steps_done();
    for (int i = 0; i < 32; ++i) {
      // (Advance takes the channel's lock; Worth looks at the awaited headers without it. The
      // first poll of a batch always advances, for writes that became possible.)
      if ((i == 0 || run.Worth()) && run.Advance()) return FinishSlotRun(run, *env.engine);
      if (run.steps_done() != before) break;
#if defined(__x86_64__) || defined(__i386__)
      if (spin_us > 0) __builtin_ia32_pause();
#endif
    }
    if (run.Blocked()) env.registry->AdvanceAll();
    const auto now = Clock::now();
    if (run.steps_done() != before) {
      since = now;
      nap_us = 20;
    }
    if (now >= deadline) {
      char secs[32];
      snprintf(secs, sizeof(secs), "%.3g", std::chrono::duration<double>(now - start).count());
      Status st = TimeoutError("rank " + std::to_string(env.rank) + ": " + run.what() + " timed out after " + secs +
                               " s (" + run.Progress() + "); the communicator is unusable now");
      run.Fail(st);
      return FinishSlotRun(run, *env.engine);
    }
    // Now and then: messages (a peer that closed or failed) and peers that died.
    if (now - checked >= std::chrono::milliseconds(1)) {
      checked = now;
      env.engine->Poll();
      if (Status f = env.engine->failure(); !f.ok()) {
        // (What the call needs may all be in the slots: see ArrivedAfterFailure.)
        if (!run.Advance()) run.Fail(f);
        return FinishSlotRun(run, *env.engine);
      }
    }
    const auto waited = std::chrono::duration_cast<std::chrono::microseconds>(now - since).count();
    if (waited < spin_us) continue;
    if (waited < env.yield_us) {
      sched_yield();
    } else {
      const uint32_t seen = ch.PrepareSleep();
      if (!run.Advance() && !run.Blocked()) ch.Sleep(seen, nap_us);
      ch.EndSleep();
      nap_us = std::min(nap_us * 2, 1000);
    }
  }
}

bool SlotWork::Test() {
  if (run_->done()) return true;
  if (run_->Blocked()) env_.registry->AdvanceAll();
  if (!run_->Advance()) {
    // Failed with the engine's error only once what it needs is not in the slots (see
    // ArrivedAfterFailure).
    Status f = env_.engine->failure();
    if (f.ok()) return false;
    run_->Fail(f);
  }
  (void)FinishSlotRun(*run_, *env_.engine);  // the run keeps its status for status() and Wait
  return true;
}

Status SlotWork::Wait(double timeout_s) { return WaitSlotRun(*run_, env_, timeout_s); }

}  // namespace tutti
