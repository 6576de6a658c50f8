// One collective through the slot channel (core/coll/slot_channel.h): the call cut into rounds
// that fit a slot, what each rank writes into its slot and what it takes from the others', and
// the Work that waits for it (spinning, yielding or sleeping on the channel's bell).
//
// Per round, elements [lo, lo + m) of the per-rank count:
//   all_reduce, reduce      every rank writes its chunk; readers (all, or the root) reduce the
//                           ranks' slots in rank order (premul_sum scales while writing, avg
//                           divides after reducing)
//   broadcast, scatter      the root writes (scatter: the chunk of every rank's block); the
//                           others copy theirs
//   all_gather, gather      every rank writes its chunk; readers copy every rank's
//   reduce_scatter          every rank writes the chunk of every block; each reduces its block
//   all_to_all              every rank writes the chunk of every block; each copies its block
//   barrier                 one round with no data: every rank waits for every other
// A direct call (all_gather, gather, scatter, all_to_all, broadcast; SlotCall::direct) is one round whatever
// its size: writers publish their input's address, readers copy their blocks from it with
// process_vm_readv, and a writer completes only once every rank that reads its buffer finished
// the round (so a direct rooted call is not one-directional).
// Each round a rank waits for the slot headers of the ranks whose data it takes (every rank for
// the all-to-all kinds and barrier; the root for a non-root of broadcast and scatter; every rank
// for the root of reduce and gather; none for the root of broadcast/scatter, a non-root of
// reduce/gather), so that a rooted call is one-directional, as eager
// messages are: a root runs up to a slot depth of calls ahead of the readers. It compares each
// header it waits for with its own call: a rank that called something else fails the call and
// the communicator (telling the peers), naming both calls. Calls in which two ranks never look
// at each other's headers are compared later: every header carries a digest of the rank's
// earlier calls (SlotDesc::trail), so the next call that connects the two ranks fails with
// kMismatch, naming the calls in between. SlotCall::strict (TUTTI_STRICT_CHECKS) makes every rank
// wait for every header instead, so every mismatch fails the call itself on every rank.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <utility>

#include "algorithms/schedule.h"
#include "core/base/dtype.h"
#include "core/coll/coll_call.h"
#include "core/coll/coll_registry.h"
#include "core/coll/run.h"
#include "core/coll/slot_channel.h"
#include "core/p2p/engine.h"
#include "core/work.h"

namespace tutti {

struct SlotCall {
  algo::Collective coll = algo::Collective::kBarrier;
  const char* input = nullptr;  // null where this rank provides none
  char* output = nullptr;       // null where this rank receives nothing
  uint64_t count = 0;           // per rank, as the Communicator's collectives take it
  DataType type = DataType::kUint8;
  RedOp op = RedOp::kSum;
  int root = 0;
  double premul_scalar = 1.0;
  bool strict = false;  // wait for (and compare) every rank's header every round
  // all_gather, gather, scatter, all_to_all, broadcast: one round in which the writers publish their input's
  // address and readers copy their blocks straight from it (SlotChannel::ReadPeer), one copy
  // instead of two; a writer's call completes once its readers finished the round.
  bool direct = false;
};

// "all_reduce #3 (slots, count 8, float32, sum)" (seq 0: without the number).
std::string SlotCallText(const SlotCall& c, uint64_t seq = 0);

// (The small functions below run on every call: inline, so that what they compute stays in
// registers instead of going through memory between calls.)
namespace slot_call {
// Blocks of the per-rank count a rank writes per round: one, or one per rank.
inline bool PerRankBlocks(algo::Collective c) {
  return c == algo::Collective::kReduceScatter || c == algo::Collective::kScatter || c == algo::Collective::kAllToAll;
}
using coll_call::Reduces;
using coll_call::Rooted;
}  // namespace slot_call

// Elements per round of `c` in slots of `slot_bytes` with `nranks` ranks (0: it does not fit).
inline uint64_t SlotChunk(const SlotCall& c, int nranks, uint64_t slot_bytes) {
  if (c.coll == algo::Collective::kBarrier || c.count == 0) return 1;
  if (c.direct) return c.count;  // (one round, whatever its size)
  const uint64_t per =
      DataTypeSize(c.type) * (slot_call::PerRankBlocks(c.coll) ? static_cast<uint64_t>(nranks) : 1);
  return per == 0 ? 0 : slot_bytes / per;
}
// Rounds `c` takes, given a chunk from SlotChunk: 0 for a call of count 0 (but a barrier's, or
// with SlotCall::strict), which completes at once and is compared through the trail only.
inline uint32_t SlotRounds(const SlotCall& c, uint64_t chunk) {
  if (c.coll == algo::Collective::kBarrier) return 1;
  if (c.count == 0) return c.strict ? 1 : 0;  // nothing to move: only the trail records the call
  if (chunk == 0 || c.count <= chunk) return 1;
  return static_cast<uint32_t>((c.count + chunk - 1) / chunk);
}

// What every round of a call of `parts` rounds says about the call (part and trail left 0).
inline SlotDesc SlotCallDesc(const SlotCall& c, uint32_t parts) {
  SlotDesc d;
  d.coll = static_cast<uint8_t>(c.coll);
  d.type = static_cast<uint8_t>(c.type);
  d.op = static_cast<uint8_t>(slot_call::Reduces(c.coll) ? c.op : RedOp::kSum);
  d.root = slot_call::Rooted(c.coll) ? c.root : 0;
  d.count = c.count;
  d.parts = parts;
  return d;
}

class SlotRun : public CollRun {
 public:
  // The call's rounds take the channel's next units. `keep` holds temporaries (a private copy of an overlapping input) until the run is destroyed.
  // `seq` numbers the communicator's collectives in messages ("all_reduce #3 (slots, ...)").
  // Runs are constructed in issue order (under the issuing claim): the call joins the channel's
  // trail here.
  SlotRun(std::shared_ptr<SlotChannel> channel, const SlotCall& call, uint64_t chunk, uint64_t seq,
          std::shared_ptr<void> keep = nullptr);

  bool Advance() override;
  bool done() const override { return done_.load(std::memory_order_acquire); }
  uint64_t steps_done() const override { return moves_.load(std::memory_order_relaxed); }
  Status status() const override;
  void Fail(const Status& why) override;
  std::string Progress() const override;
  std::string what() const override;
  // True while an earlier call holds up this one's rounds (its waiter must drive that call), as
  // of the last Advance.
  bool Blocked() const;
  // Whether Advance may move now (without the lock): the round awaited when it last looked has
  // arrived from every rank, or something else may have changed.
  bool Worth() const;
  SlotChannel& channel() const { return *channel_; }
  // The ranks whose headers this run waits for, [first, second) (every rank when it waits for no
  // header: it may wait for their room).
  std::pair<int, int> Awaited() const { return wait_lo_ < wait_hi_ ? std::make_pair(wait_lo_, wait_hi_) : std::make_pair(0, n_); }
  // The calling thread alone advances this run and touches the channel (no other run is in
  // flight and it holds the issuing claim): Advance and the rest skip the channel's lock.
  void SetSolo() { solo_ = true; }

 private:
  std::unique_lock<std::mutex> Lock() const;  // the channel's, unless solo
  bool Writes() const;
  bool OwnDirect() const;
  SlotDesc DescOf(uint32_t part) const;
  bool AllArrived(uint32_t s) const;         // every header this rank waits for, at unit s
  Status Compare(uint32_t part, uint32_t s);  // those headers against this rank's round `part`
  // After a rank marked the area failed (f: the first), whether the round at unit s fails: with
  // awaited headers missing, and with all of them here (slot_run.cc says when).
  [[gnu::cold, gnu::noinline]] Status MissingAfterFailure(int f, uint32_t s) const;
  [[gnu::cold, gnu::noinline]] Status ArrivedAfterFailure(uint32_t s) const;
  // The errors (built only when needed, out of the per-call path): rank p's header `theirs`
  // differs from `mine`; rank f (another rank) failed before it finished the round; this rank's
  // communicator failed (with the reason it left in the area).
  [[gnu::cold, gnu::noinline]] Status Mismatch(int p, const SlotDesc& mine, const SlotDesc& theirs) const;
  [[gnu::cold, gnu::noinline]] Status FailedRank(int f) const;
  [[gnu::cold, gnu::noinline]] Status SelfFailed() const;
  uint64_t Elems(uint32_t part) const;       // per block, in round `part`
  uint64_t RoundBytes(uint32_t part) const;  // data bytes of round `part` in a rank's units
  Status Write(uint32_t part, const SlotChannel::Span& sp);
  Status Read(uint32_t part, uint32_t s);  // s: the round's first data unit
  Status ReadDirect(uint32_t s);
  // A direct call's writer: whether rank p reads this rank's buffer; whether all that do
  // finished the round (failing the call where one gave up on it).
  bool ReadsMine(int p) const;
  bool Released(Status* st) const;
  void FinishLocked(Status st);

  std::shared_ptr<SlotChannel> channel_;
  SlotCall call_;
  uint64_t chunk_;
  uint32_t rounds_;
  uint64_t seq_;
  std::shared_ptr<void> keep_;
  size_t elem_;
  int n_, me_;
  int wait_lo_, wait_hi_;  // the ranks whose headers this rank waits for: [wait_lo_, wait_hi_)
  SlotDesc desc_;  // what every round says about the call (but its part), the trail included
  SlotChannel::Span wspan_, rspan_;  // the units of round written_ / read_ (while < rounds_)

  uint32_t written_ = 0, read_ = 0;  // rounds of this call written and finished (channel's lock)
  bool released_ = false;  // a direct call: its readers finished its round (channel's lock)
  Status status_;
  std::atomic<bool> done_{false};
  std::atomic<uint64_t> moves_{0};
  std::atomic<bool> blocked_{false};    // an earlier call of this rank holds up this one's rounds
  std::atomic<uint32_t> awaited_{0};  // the round whose headers Advance waits for (0: none)
  bool solo_ = false;
  bool prechecked_ = false;  // reductions may skip ReduceN's argument checks
};

// What waiting for a slot run needs from its communicator.
struct SlotWaitEnv {
  P2PEngine* engine = nullptr;
  CollRegistry* registry = nullptr;  // drives earlier calls that hold this one up
  int rank = 0;
  double default_timeout_s = 300;
  int spin_us = 50, yield_us = 2000;
  // A waiter that finds a rank it waits for on its own CPU may move to a CPU no rank uses.
  bool spread = true;
};

// How long a waiter for `run` spins before it yields (SpinUsBeside over the ranks it awaits).
int SlotSpinUs(const SlotRun& run, const SlotWaitEnv& env);

// Waits for `run` (timeout_s < 0: the default): polls, yields, then sleeps on the channel's bell;
// polls the engine every millisecond (a peer that failed or died). A run that fails fails the
// communicator, telling the peers.
Status WaitSlotRun(SlotRun& run, const SlotWaitEnv& env, double timeout_s);

class SlotWork : public WorkImpl {
 public:
  // Holds the engine and registry that `env` points to for as long as the Work lives.
  SlotWork(std::shared_ptr<SlotRun> run, std::shared_ptr<P2PEngine> engine, std::shared_ptr<CollRegistry> registry,
           const SlotWaitEnv& env)
      : run_(std::move(run)), engine_(std::move(engine)), registry_(std::move(registry)), env_(env) {
    env_.engine = engine_.get();
    env_.registry = registry_.get();
  }
  Status Wait(double timeout_s) override;
  bool Test() override;
  bool IsCompleted() const override { return run_->done(); }
  Status status() const override { return run_->status(); }

 private:
  std::shared_ptr<SlotRun> run_;
  std::shared_ptr<P2PEngine> engine_;
  std::shared_ptr<CollRegistry> registry_;
  SlotWaitEnv env_;
};

}  // namespace tutti
