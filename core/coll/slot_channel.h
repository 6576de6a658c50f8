// The slot channel: how the ranks of a communicator that all live on one host exchange small
// collectives through one shared-memory area, with no message, acknowledgement or lock.
//
// Every rank owns `depth` slots. A collective is cut into rounds (numbered from 1, in the order
// the ranks issue them, so every rank gives round s to the same call). In round s a rank copies
// its contribution into its slot s % depth and then publishes the slot by storing s into the
// slot's header (a release store; the header also describes the call, so that a rank that
// called something else is caught). Readers wait until the header says s (acquire), take what
// they need straight from the slots (an all-reduce reduces every rank's slot locally, in rank
// order, so every rank computes the same bits) and then say they finished round s. A slot is
// written again, for round s + depth, only once every rank finished round s: that is the whole
// flow control, and with depth > 1 a long call's rounds pipeline.
//
// Waiting: a rank polls the words it waits for; one that gives up its core first announces
// that it sleeps and then blocks in a futex on its own bell, which whoever publishes or finishes
// a round rings when someone sleeps (the announcement and the re-check close the race).
//
// Layout of the area (all offsets multiples of 64, the creator writes the header):
//   header | per rank: a line with `done`, a line with the bell | per rank, per slot: header + data
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/base/status.h"

namespace tutti {

// What a slot's round belongs to; ranks must agree on every field.
struct SlotDesc {
  uint8_t coll = 0, type = 0, op = 0;
  int32_t root = 0;
  uint64_t count = 0;
  uint32_t part = 0, parts = 0;  // this round's index within the call, and the call's rounds
  // A digest of every call this rank issued through the channel before this one (Chain): equal
  // on two ranks when (but for a 2^-32 chance) all their earlier calls matched, also those in
  // which neither waited for the other's header.
  uint32_t trail = 0;
  bool SameCall(const SlotDesc& o) const {
    return coll == o.coll && type == o.type && op == o.op && root == o.root && count == o.count &&
           part == o.part && parts == o.parts;
  }
  bool operator==(const SlotDesc& o) const { return SameCall(o) && trail == o.trail; }
  bool operator!=(const SlotDesc& o) const { return !(*this == o); }
};

class SlotChannel {
 public:
  struct Shape {
    int nranks = 0;
    int depth = 0;
    uint64_t slot_bytes = 0;  // data bytes of one slot
  };
  // Bytes of the shared area for `s`.
  static uint64_t AreaBytes(const Shape& s);
  // The creator writes the header into a fresh zero-filled area of AreaBytes(s) bytes.
  static void Format(void* area, const Shape& s);
  // Every rank (the creator too) reads the shape back, checking it fits `bytes`.
  static Result<Shape> ReadShape(const void* area, size_t bytes);

  // Over `area` (mapped by the caller; `keep` holds the mapping for as long as the channel lives).
  SlotChannel(void* area, const Shape& s, int rank, std::shared_ptr<void> keep = nullptr);
  SlotChannel(const SlotChannel&) = delete;
  SlotChannel& operator=(const SlotChannel&) = delete;

  int nranks() const { return shape_.nranks; }
  int rank() const { return rank_; }
  uint64_t slot_bytes() const { return shape_.slot_bytes; }

  // Rounds for a call of `n` rounds, in issue order (the issuing thread only): the first.
  uint32_t Reserve(uint32_t n) {
    uint32_t first = next_round_;
    next_round_ += n;
    return first;
  }
  // The trail of the call being issued (its rounds' SlotDesc::trail), advancing the trail past
  // `call` (its description; part is ignored). Calls chain in issue order (the issuing thread).
  uint32_t Chain(const SlotDesc& call);
  // The number of the last call in which this rank compared its call with `peer`'s and found
  // them equal (0: none yet), for messages about calls that diverged earlier. Under mu().
  uint64_t AgreedWith(int peer) const;
  void Agreed(int peer, uint64_t seq);
  // True when this rank may write round `s`: every rank finished round s - depth. Under mu().
  bool Writable(uint32_t s);
  // This rank's slot for round s (slot_bytes of data).
  char* MySlot(uint32_t s) const { return Data(rank_, s); }
  // Publishes this rank's slot for round s (after its data is written), waking sleepers.
  void Publish(uint32_t s, const SlotDesc& d);
  // True once `peer` published round s (its data and Desc may be read until we Finish s).
  bool Arrived(int peer, uint32_t s) const { return Header(peer, s)->round.load(std::memory_order_acquire) == s; }
  const char* PeerSlot(int peer, uint32_t s) const { return Data(peer, s); }
  SlotDesc Desc(int peer, uint32_t s) const;
  // The last round this rank finished; rounds finish in order.
  uint32_t finished() const { return CtlOf(rank_)->done.load(std::memory_order_relaxed); }
  void Finish(uint32_t s);
  // For messages: the last round `peer` published into slot s % depth, and finished.
  uint32_t PublishedBy(int peer, uint32_t s) const;
  uint32_t FinishedBy(int peer) const;

  // A rank whose communicator failed marks the area, so that no rank completes a call through it
  // any more (a rank may otherwise finish a round with a peer that gave up on the call). The
  // first rank to mark it also leaves why (its error, shortened), for the others' messages.
  void MarkFailed(const std::string& why = "");
  // The rank that marked the area failed (the first), or -1.
  int FailedBy() const;
  // What that rank said ("" while it is still writing it, or if it said nothing).
  std::string FailureReason() const;

  // Sleeping until some rank publishes or finishes a round: PrepareSleep announces it and
  // returns the bell's value; re-check, then Sleep (returns at once if the bell rang since);
  // EndSleep after every PrepareSleep.
  uint32_t PrepareSleep();
  void Sleep(uint32_t seen, int timeout_us);
  void EndSleep();

  // Serialises the threads that advance this rank's calls (the caller's and the progress thread).
  std::mutex& mu() { return mu_; }

 private:
  // 64 B of shape and the failed word, then the failing rank's reason (length word + text).
  static constexpr uint64_t kReasonOffset = 64;
  static constexpr uint64_t kReasonBytes = 448;
  static constexpr uint64_t kHeaderBytes = kReasonOffset + kReasonBytes;
  static constexpr uint64_t kSlotHeaderBytes = 32;
  struct Ctl {
    alignas(64) std::atomic<uint32_t> done;  // last round this rank finished
    alignas(64) std::atomic<uint32_t> bell;  // rung when this rank sleeps and something moved
    std::atomic<uint32_t> sleepers;
  };
  struct SlotHeader {
    std::atomic<uint32_t> round;  // the round this slot was last published for
    uint8_t coll, type, op, pad;
    int32_t root;
    uint32_t part;
    uint64_t count;
    uint32_t parts;
    uint32_t trail;
  };
  Ctl* CtlOf(int r) const {
    return reinterpret_cast<Ctl*>(area_ + kHeaderBytes + static_cast<uint64_t>(r) * sizeof(Ctl));
  }
  SlotHeader* Header(int r, uint32_t s) const {
    const uint64_t index = static_cast<uint64_t>(r) * static_cast<uint64_t>(shape_.depth) + s % shape_.depth;
    return reinterpret_cast<SlotHeader*>(slots_ + index * stride_);
  }
  char* Data(int r, uint32_t s) const { return reinterpret_cast<char*>(Header(r, s)) + kSlotHeaderBytes; }
  void Wake();
  std::atomic<uint32_t>* FailedWord() const;

  std::shared_ptr<void> keep_;
  char* area_;
  char* slots_;  // the first slot, after the per-rank lines
  Shape shape_;
  int rank_;
  uint64_t stride_;  // bytes per slot, header included
  uint32_t next_round_ = 1;
  uint32_t trail_ = 0;
  std::vector<uint64_t> agreed_;  // per peer, AgreedWith
  uint32_t writable_until_;  // every round up to this one is known to be writable,
  bool writable_known_ = false;  // once a first look found that
  std::mutex mu_;
};

}  // namespace tutti
