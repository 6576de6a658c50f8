// The slot channel: how the ranks of a communicator that all live on one host exchange small
// collectives through one shared-memory area, with no message, acknowledgement or lock.
//
// Every rank owns a ring of `units` slot units of `unit_bytes` each, numbered from 1 on (unit u
// lives at u % units). A collective is cut into rounds of at most `round_units` units, and each
// round takes as many consecutive units as its data needs (at least one), in the order the
// ranks issue the calls, so that every rank gives the same units to the same round (a round that
// would wrap around the ring's end starts at its beginning instead, the units skipped being part
// of it). In a round a rank copies its contribution into its units and then publishes the round
// by storing the number of its first data unit into that unit's header (a release store; the
// header also describes the call, so that a rank that called something else is caught; the
// round's other units get headers that say they are filler, so that a rank whose rounds fell out
// of step with this one's is caught too). Readers wait until the header says that number
// (acquire), take what they need straight from the units (an all-reduce reduces every rank's
// units locally, in rank order, so every rank computes the same bits) and then say they
// finished the round's last unit. A unit is written again, for unit u + units, only once every
// rank finished unit u: that is the whole flow control. Small calls take one unit each, so a
// rank may be `units` small calls ahead of the slowest; a long call streams `units /
// round_units` rounds at once.
//
// A direct round (SlotCall::direct, core/coll/slot_run.h) takes one unit and carries no data: its
// header holds the address of the writer's buffer, which readers copy from with process_vm_readv
// (ReadPeer); the writer keeps the buffer until its readers finished the round.
//
// Waiting: a rank polls the words it waits for; one that gives up its core first announces
// that it sleeps and then blocks in a futex on its own bell, which whoever publishes or finishes
// a round rings when someone sleeps (the announcement and the re-check close the race).
//
// Layout of the area (all offsets multiples of 64, the creator writes the header):
//   header | per rank: a line with `done` (and the unit it gave up on), a line with the bell |
//   per rank, per unit: a header line | per rank, per unit: data
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/coll/call_digest.h"
#include "core/p2p/cpu_board.h"

namespace tutti {

// What a slot's round belongs to; ranks must agree on every field.
struct SlotDesc {
  uint8_t coll = 0, type = 0, op = 0;
  int32_t root = 0;
  uint64_t count = 0;
  uint32_t part = 0, parts = 0;  // this round's index within the call, and the call's rounds
  bool fill = false;             // a unit of the round that is not its first data unit
  // A digest of every call this rank issued through the channel before this one (Chain): equal
  // on two ranks when (but for a 2^-32 chance) all their earlier calls matched, also those in
  // which neither waited for the other's header.
  uint32_t trail = 0;
  // coll, type, op and root in one word (what a digest of the call folds in with count and parts).
  uint64_t Head() const {
    return coll | uint64_t{type} << 8 | uint64_t{op} << 16 | uint64_t{static_cast<uint32_t>(root)} << 32;
  }
  bool SameCall(const SlotDesc& o) const {
    return coll == o.coll && type == o.type && op == o.op && root == o.root && count == o.count &&
           part == o.part && parts == o.parts && fill == o.fill;
  }
  bool operator==(const SlotDesc& o) const { return SameCall(o) && trail == o.trail; }
  bool operator!=(const SlotDesc& o) const { return !(*this == o); }
};

class SlotChannel final : public CpuBoard {
 public:
  struct Shape {
    int nranks = 0;
    int units = 0;            // per rank
    uint64_t unit_bytes = 0;  // data bytes of one unit (a multiple of 64)
    int round_units = 0;      // the most units one round takes
  };
  // The units a round of some bytes takes when placed at unit `pos` (the unit after the last
  // round's): [start, data) the units skipped to keep the data from wrapping around, [data,
  // end] its data.
  struct Span {
    uint32_t start = 0, data = 0, end = 0;
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

  int units() const { return shape_.units; }
  // The most data bytes of one round.
  uint64_t slot_bytes() const { return shape_.unit_bytes * static_cast<uint64_t>(shape_.round_units); }

  // Where a round of `bytes` (at most slot_bytes()) goes if placed at unit `pos`.
  Span Place(uint32_t pos, uint64_t bytes) const {
    // (Inline, and no division for the usual round of one unit: every call places its rounds.)
    const uint64_t need = bytes <= shape_.unit_bytes ? 1 : (bytes + shape_.unit_bytes - 1) / shape_.unit_bytes;
    const uint32_t k = static_cast<uint32_t>(std::min<uint64_t>(need, static_cast<uint64_t>(shape_.round_units)));
    const uint32_t units = static_cast<uint32_t>(shape_.units);
    const uint32_t at = Slot(pos);
    Span sp;
    sp.start = pos;
    sp.data = at + k > units ? pos + (units - at) : pos;
    sp.end = sp.data + k - 1;
    return sp;
  }
  // The unit the next call's first round is placed at; Reserve(n) gives the call n units from
  // there on (in issue order, the issuing thread only).
  uint32_t next_unit() const { return next_unit_; }
  void Reserve(uint32_t n) { next_unit_ += n; }
  // The trail of the call being issued (its rounds' SlotDesc::trail), advancing the trail past
  // `call` (its description; part is ignored). Calls chain in issue order (the issuing thread).
  uint32_t Chain(const SlotDesc& call) {
    const uint32_t before = trail_;
    trail_ = ChainDigest(before, call.Head(), call.count, call.parts);
    return before;
  }
  // The number of the last call in which this rank compared its call with `peer`'s and found
  // them equal (0: none yet), for messages about calls that diverged earlier. Under mu().
  uint64_t AgreedWith(int peer) const;
  void Agreed(int peer, uint64_t seq);
  // True when this rank may write unit `u`: every rank finished unit u - units. Under mu().
  bool Writable(uint32_t u);
  // Rounds of up to this many bytes keep their data in the header's line, beside the number
  // that publishes it: a reader takes one line from the writer's cache instead of two.
  static constexpr uint64_t kInlineBytes = 32;
  // This rank's data of a round of `bytes` whose first data unit is u (contiguous).
  char* MySlot(uint32_t u, uint64_t bytes) const {
    return bytes <= kInlineBytes ? Header(rank_, u)->data : Data(rank_, u);
  }
  // Publishes this rank's round `sp` (after its data is written), waking sleepers (or not:
  // then the caller calls Wake once for all it published and finished).
  void Publish(const Span& sp, const SlotDesc& d, bool wake = true);

  // Rounds that leave the data where it is: the writer publishes the address of its buffer
  // (SetAddress before Publish, at the round's first data unit) and keeps the buffer until its
  // readers finished the round; readers copy from it with process_vm_readv (ReadPeer).
  void SetAddress(uint32_t u, const void* p) {
    const uint64_t a = reinterpret_cast<uintptr_t>(p);
    std::memcpy(Header(rank_, u)->data, &a, sizeof(a));
  }
  uint64_t AddressOf(int peer, uint32_t u) const {
    uint64_t a;
    std::memcpy(&a, Header(peer, u)->data, sizeof(a));
    return a;
  }
  // Copies `len` bytes at `addr` in rank `peer`'s process into `to`.
  Status ReadPeer(int peer, void* to, uint64_t addr, size_t len) const;
  // Whether this rank can read every other rank's memory so (it reads a word each rank's
  // channel published): kUnavailable where the kernel refuses (ptrace policy), naming the rank.
  Status ProbeReads() const;
  // True once `peer` published a round or filler at unit u (its data and Desc may be read until
  // we Finish the round).
  bool Arrived(int peer, uint32_t u) const { return Header(peer, u)->round.load(std::memory_order_acquire) == u; }
  const char* PeerSlot(int peer, uint32_t u, uint64_t bytes) const {
    return bytes <= kInlineBytes ? Header(peer, u)->data : Data(peer, u);
  }
  SlotDesc Desc(int peer, uint32_t u) const {
    const SlotHeader* h = Header(peer, u);
    SlotDesc d;
    d.coll = h->coll;
    d.type = h->type;
    d.op = h->op;
    d.root = h->root;
    d.part = h->part;
    d.count = h->count;
    d.parts = h->parts;
    d.trail = h->trail;
    d.fill = h->fill != 0;
    return d;
  }
  // The last unit this rank finished; rounds finish in order, each at its last unit.
  uint32_t finished() const { return CtlOf(rank_)->done.load(std::memory_order_relaxed); }
  void Finish(uint32_t u, bool wake = true);
  // Wakes the ranks that sleep until something moves.
  void Wake();
  // For messages: the last unit `peer` published at unit u's place, and the last it finished.
  uint32_t PublishedBy(int peer, uint32_t u) const;
  uint32_t FinishedBy(int peer) const;

  // A rank whose communicator failed marks the area, so that ranks waiting for a header that may
  // never come fail instead of waiting (a round whose headers all arrived still completes, unless
  // a rank gave up on it: SlotRun::ArrivedAfterFailure). The first rank to mark it also leaves why
  // (its error, shortened), for the others' messages and its own.
  void MarkFailed(const std::string& why = "");
  // The rank that marked the area failed (the first), or -1.
  int FailedBy() const;
  // This rank gave up on a call (it failed) without finishing the round at unit u: peers that
  // have every header of that round and look after this fail it too instead of completing it
  // (one that completed it first keeps its result). The earliest unit given up on is kept. Rank
  // `peer` gave up on the round at unit u or an earlier one.
  void GiveUp(uint32_t u);
  bool GaveUp(int peer, uint32_t u) const;
  // What that rank said ("" while it is still writing it, or if it said nothing).
  std::string FailureReason() const;

  // Sleeping until some rank publishes or finishes a round: PrepareSleep announces it and
  // returns the bell's value; re-check, then Sleep (returns at once if the bell rang since);
  // EndSleep after every PrepareSleep.
  uint32_t PrepareSleep();
  void Sleep(uint32_t seen, int timeout_us);
  void EndSleep();

  // The board of the CPUs the ranks wait on (CpuBoard), in the ranks' control lines.
  int rank() const override { return rank_; }
  int nranks() const override { return shape_.nranks; }
  void NoteCpu(int cpu) override {
    const uint32_t v = static_cast<uint32_t>(cpu) + 1;
    if (noted_cpu_.load(std::memory_order_relaxed) == v) return;
    noted_cpu_.store(v, std::memory_order_relaxed);
    CtlOf(rank_)->cpu.store(v, std::memory_order_relaxed);
  }
  int RankOnCpu(int lo, int hi, int cpu) const override {
    const uint32_t v = static_cast<uint32_t>(cpu) + 1;
    for (int p = lo; p < hi; ++p)
      if (p != rank_ && CtlOf(p)->cpu.load(std::memory_order_relaxed) == v) return p;
    return -1;
  }

  // Serialises the threads that advance this rank's calls (the caller's and the progress thread).
  std::mutex& mu() { return mu_; }

 private:
  // 64 B of shape and the failed word, then the failing rank's reason (length word + text).
  static constexpr uint64_t kReasonOffset = 64;
  static constexpr uint64_t kReasonBytes = 448;
  static constexpr uint64_t kHeaderBytes = kReasonOffset + kReasonBytes;
  static constexpr uint64_t kSlotHeaderBytes = 64;  // a line per unit
  struct Ctl {
    alignas(64) std::atomic<uint32_t> done;  // last round this rank finished
    std::atomic<uint32_t> gave_up;       // 1 once gave_up_unit is set (GiveUp)
    std::atomic<uint32_t> gave_up_unit;
    std::atomic<uint32_t> cpu;           // NoteCpu: the CPU (+1) it last began to wait on; 0: not yet
    std::atomic<uint32_t> pid;           // the rank's process (ReadPeer)
    std::atomic<uint64_t> probe;         // the address of a word ProbeReads reads in that process
    alignas(64) std::atomic<uint32_t> bell;  // rung when this rank sleeps and something moved
    std::atomic<uint32_t> sleepers;
  };
  struct SlotHeader {
    std::atomic<uint32_t> round;  // the round this slot was last published for
    uint8_t coll, type, op, fill;
    int32_t root;
    uint32_t part;
    uint64_t count;
    uint32_t parts;
    uint32_t trail;
    alignas(32) char data[kInlineBytes];  // the data of a round of up to kInlineBytes
  };
  Ctl* CtlOf(int r) const {
    return reinterpret_cast<Ctl*>(area_ + kHeaderBytes + static_cast<uint64_t>(r) * sizeof(Ctl));
  }
  uint32_t Slot(uint32_t u) const { return mask_ != 0 ? u & mask_ : u % static_cast<uint32_t>(shape_.units); }
  uint64_t Index(int r, uint32_t u) const {
    return static_cast<uint64_t>(r) * static_cast<uint64_t>(shape_.units) + Slot(u);
  }
  SlotHeader* Header(int r, uint32_t u) const {
    return reinterpret_cast<SlotHeader*>(headers_ + Index(r, u) * kSlotHeaderBytes);
  }
  char* Data(int r, uint32_t u) const { return data_ + Index(r, u) * shape_.unit_bytes; }
  void Put(uint32_t u, const SlotDesc& d, bool fill);
  std::atomic<uint32_t>* FailedWord() const;

  std::shared_ptr<void> keep_;
  char* area_;
  char* headers_;  // the units' headers, after the per-rank lines
  char* data_;     // the units' data, after the headers
  Shape shape_;
  int rank_;
  uint32_t mask_;  // units - 1 where units is a power of two (a mask, not a division), else 0
  uint32_t next_unit_ = 1;
  uint32_t trail_ = 0;
  std::atomic<uint32_t> noted_cpu_{0};  // what NoteCpu last stored (waiters of several threads)
  std::vector<uint64_t> agreed_;  // per peer, AgreedWith
  uint32_t writable_until_;  // every round up to this one is known to be writable,
  bool writable_known_ = false;  // once a first look found that
  std::mutex mu_;
};

}  // namespace tutti
