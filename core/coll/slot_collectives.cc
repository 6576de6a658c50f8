// Communicator's collectives through the shared slots (core/coll/slot_run.h): which calls take
// them, preparing such a call, and issuing it (async) or running it on the calling thread
// (blocking, with nothing allocated when no other call is in flight).
#include <cstring>

#include "core/coll/buffer_pool.h"
#include "core/coll/call_digest.h"
#include "core/coll/coll_call.h"
#include "core/coll/coll_registry.h"
#include "core/coll/selector.h"
#include "core/coll/slot_channel.h"
#include "core/coll/slot_run.h"
#include "core/communicator.h"
#include "core/p2p/engine.h"

namespace tutti {

using namespace coll_call;

namespace {
SlotCall SlotCallOf(Collective coll, const void* send, void* recv, uint64_t count, DataType type, RedOp op, int root,
                    double premul, bool need_in, bool need_out) {
  SlotCall sc;
  sc.coll = coll;
  sc.input = need_in ? static_cast<const char*>(send) : nullptr;
  sc.output = need_out ? static_cast<char*>(recv) : nullptr;
  sc.count = count;
  sc.type = type;
  sc.op = op;
  sc.root = Rooted(coll) ? root : 0;
  sc.premul_scalar = premul;
  return sc;
}

// The layouts in which a slot call may read its input from the output buffer it writes (each
// round writes only the part of the output that holds inputs already copied to the slots).
bool SlotInPlace(Collective c, const char* in, const char* out, uint64_t block) {
  switch (c) {
    case Collective::kAllGather:
    case Collective::kGather: return in == out + block;
    case Collective::kReduceScatter:
    case Collective::kScatter: return out == in + block;
    default: return in == out;
  }
}

}  // namespace

struct Communicator::SlotPrep {
  SlotCall call;
  uint64_t chunk = 0;
  std::shared_ptr<char> copy;  // a private copy of an input that overlaps the output
  uint64_t named_seq = 0;      // the number another thread's error gives it (set before the claim)
  uint64_t seq = 0;            // its number (set once claimed)
  size_t in_flight = 0;        // earlier collectives of this rank still in flight at the claim
};

// Whether a call goes through the slots: single-host communicators, host memory, calls up to
// slot_max_ bytes unless an algorithm is asked for (per call or TUTTI_ALGO), or when the call
// asks for "slots". Every input of the decision is the same on every rank for matching calls.
bool Communicator::TakesSlots(const CollCall& c, const CallShape& s) const {
  if (!slots_ || s.device >= 0) return false;
  const std::string& a = c.opts->algorithm;
  if (a == "slots") return true;
  if (!a.empty() || coll_cfg_->selector.Forces(c.coll)) return false;
  if (SlotDirect(c, s)) return true;
  const SlotCall sc = SlotCallOf(c.coll, c.send, c.recv, c.count, c.type, c.op, c.root, 1.0, false, false);
  if (SlotChunk(sc, size_, slots_->slot_bytes()) == 0) return false;
  // Blocks that messages would read one-sidedly, in one copy (SlotArea::copy_block_max; larger
  // than kCopyReadMax they would stream through the FIFO: two copies either way).
  const uint64_t block = c.count * s.elem;
  if (MovesBlocks(c.coll) && !(c.coll == Collective::kAllGather && slot_all_gather_stays_) &&
      slot_copy_block_max_ > 0 && block > slot_copy_block_max_ && block <= kCopyReadMax)
    return false;
  return CallBytes(c.coll, static_cast<uint64_t>(size_), c.count, s.elem) <= slot_max_;
}

// Blocks of all_gather, gather, scatter and all_to_all from SlotRules::direct_min (rooted:
// direct_rooted_min) up, and broadcasts from direct_broadcast_min up, are read straight from the
// writers' buffers (SlotCall::direct), whatever the call's size: also above kCopyReadMax, where
// messages would stream through the FIFO in two copies (2 ranks, same-run medians of 3, us,
// messages -> direct -> Open MPI: all_gather 16 MiB 2403 -> 1824 -> 1988, 128 MiB 35152 -> 34477
// -> 33822; all_to_all 64 MiB 17048 -> 13931 -> 15325). Not all_gather's where it stays in the
// slots, nor a gather's from kSplitCopyMin up (as a message both sides copy half).
bool Communicator::SlotDirect(const CollCall& c, const CallShape& s) const {
  if (c.coll == Collective::kBroadcast)
    return slot_direct_broadcast_min_ > 0 && c.count * s.elem >= slot_direct_broadcast_min_;
  if (!MovesBlocks(c.coll) || (c.coll == Collective::kAllGather && slot_all_gather_stays_)) return false;
  const uint64_t block = c.count * s.elem;
  const uint64_t least = Rooted(c.coll) ? slot_direct_rooted_min_ : slot_direct_min_;
  return least > 0 && block >= least && (c.coll != Collective::kGather || block < kSplitCopyMin);
}

SlotCall Communicator::SlotCallFor(const CollCall& c, const CallShape& s) const {
  SlotCall sc = SlotCallOf(c.coll, c.send, c.recv, c.count, c.type, c.op, c.root, c.opts->premul_scalar, s.need_in,
                           s.need_out);
  sc.strict = strict_checks_;
  sc.direct = SlotDirect(c, s);
  return sc;
}

// `p` holds the call (SlotCallFor): the rest is filled in here. (Made with its call rather than
// default-made and then filled: zeroing it first cost more than the rest of this function.)
Status Communicator::PrepareSlotCall(const CollCall& c, const CallShape& s, SlotPrep& p) {
  p.chunk = SlotChunk(p.call, size_, slots_->slot_bytes());
  if (p.chunk == 0)
    return InvalidArgument(Who(rank_, c.coll) + ": " + std::to_string(size_) + " blocks of one " +
                           DataTypeName(c.type) + " do not fit a slot of " + std::to_string(slots_->slot_bytes()) +
                           " bytes (TUTTI_SLOT_BYTES)");
  // An input that overlaps the output other than in place is copied first; so is an in-place
  // direct all_to_all's (its peers read blocks of the buffer this rank writes).
  const uint64_t in_bytes = s.in_count * s.elem, out_bytes = s.out_count * s.elem;
  if (p.call.input != nullptr && p.call.output != nullptr &&
      Overlap(p.call.input, in_bytes, p.call.output, out_bytes) &&
      (!SlotInPlace(c.coll, p.call.input, p.call.output, static_cast<uint64_t>(rank_) * c.count * s.elem) ||
       (p.call.direct && c.coll == Collective::kAllToAll))) {
    auto b = buffers_->Get(in_bytes);
    if (!b.ok()) {
      // (Peers whose copies worked issue the call and would wait for ours: as a failure after the
      // claim does on the message path, this one fails the communicator and tells them.)
      Status st = b.status().WithContext(Who(rank_, c.coll));
      engine_->FailAndNotify(st);
      return st;
    }
    p.copy = std::move(*b);
    std::memcpy(p.copy.get(), p.call.input, in_bytes);
    p.call.input = p.copy.get();
  }
  return OkStatus();
}

SlotWaitEnv Communicator::SlotEnv() const {
  SlotWaitEnv env;
  env.engine = engine_.get();
  env.registry = colls_.get();
  env.rank = rank_;
  env.default_timeout_s = timeout();
  env.spin_us = engine_->options().spin_us;
  env.yield_us = engine_->options().yield_us;
  env.spread = engine_->options().move_waiters;
  return env;
}

// Claims the issuing of the call for this thread (the label names it to another thread that
// tries to issue meanwhile, so `p` must stay put until EndIssue), numbers it and reserves its
// rounds. A refused claim fails the communicator, telling the peers.
Status Communicator::ClaimSlotCall(SlotPrep* p) {
  p->named_seq = coll_seq_.load(std::memory_order_relaxed) + 1;
  CollLabel label;  // formatted only if another thread is issuing
  label.describe = [](const void* arg) {
    const auto* q = static_cast<const SlotPrep*>(arg);
    return SlotCallText(q->call, q->named_seq);
  };
  label.arg = p;
  if (Status claim = colls_->BeginIssue(rank_, label, &p->in_flight); !claim.ok()) {
    engine_->FailAndNotify(claim);
    return claim;
  }
  // (Its units are reserved as its run is made, under the claim. Only the claim's holder writes
  // the number: no read-modify-write needed.)
  p->seq = coll_seq_.load(std::memory_order_relaxed) + 1;
  coll_seq_.store(p->seq, std::memory_order_relaxed);
  if (p->call.direct)
    direct_slot_calls_.store(direct_slot_calls_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  // The message trail counts slot calls too, so a difference here fails a later call by messages.
  const SlotDesc d = SlotCallDesc(p->call, 0);
  trail_.Next(ChainDigest(0, d.Head(), d.count));
  return OkStatus();
}

// A claimed call as a run of the registry (driven by waiters and the progress thread); ends the
// claim.
std::shared_ptr<SlotRun> Communicator::EnqueueSlotRun(SlotPrep& p) {
  auto run = std::make_shared<SlotRun>(slots_, p.call, p.chunk, p.seq, std::move(p.copy));
  run->Advance();
  colls_->EndIssue(run);
  return run;
}

Result<Work> Communicator::StartSlotCollective(const CollCall& c, const CallShape& s) {
  SlotPrep p{SlotCallFor(c, s)};
  TUTTI_RETURN_IF_ERROR(PrepareSlotCall(c, s, p));
  TUTTI_RETURN_IF_ERROR(ClaimSlotCall(&p));
  std::shared_ptr<SlotRun> run = EnqueueSlotRun(p);
  SlotWaitEnv env = SlotEnv();
  if (c.opts->timeout_s >= 0) env.default_timeout_s = c.opts->timeout_s;
  return Work(std::make_shared<SlotWork>(std::move(run), engine_, colls_, env));
}

Status Communicator::RunSlotCollective(const CollCall& c, const CallShape& s) {
  SlotPrep p{SlotCallFor(c, s)};
  TUTTI_RETURN_IF_ERROR(PrepareSlotCall(c, s, p));
  TUTTI_RETURN_IF_ERROR(ClaimSlotCall(&p));
  if (SlotRounds(p.call, p.chunk) == 0) {
    // Nothing to move (count 0): the call only joins the trail, in issue order, and is done.
    slots_->Chain(SlotCallDesc(p.call, 0));
    colls_->EndIssue(nullptr);
    return OkStatus();
  }
  // Earlier async calls in flight hold up this call's rounds: it joins them in the registry,
  // which the wait drives.
  if (p.in_flight > 0) return WaitSlotRun(*EnqueueSlotRun(p), SlotEnv(), c.opts->timeout_s);
  // Nothing else in flight: the run lives on this stack, and the issuing claim is held until it
  // ends (another thread's collective meanwhile is refused, naming this one), so this thread
  // alone drives it and the channel: it runs without the channel's lock.
  // (The communicator holds the channel for the call's length: the run gets a pointer that owns
  // nothing, which saves two atomic updates of the channel's use count per call.)
  SlotRun run(std::shared_ptr<SlotChannel>(std::shared_ptr<SlotChannel>(), slots_.get()), p.call, p.chunk, p.seq,
              std::move(p.copy));
  run.SetSolo();
  Status st = WaitSlotRun(run, SlotEnv(), c.opts->timeout_s);
  colls_->EndIssue(nullptr);
  return st;
}

}  // namespace tutti
