#include "core/coll/slot_channel.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstring>

#include "core/base/process.h"
#include "core/base/wake_fence.h"
#include "core/coll/call_digest.h"

namespace tutti {

namespace {
constexpr uint32_t kMagic = 0x544c5354;  // "TSLT"

struct AreaHeader {
  uint32_t magic;
  int32_t nranks;
  int32_t units;
  int32_t round_units;
  uint64_t unit_bytes;
};
constexpr uint64_t kFailedOffset = 32;  // atomic<uint32_t>: 0, or 1 + the rank whose communicator failed
static_assert(sizeof(AreaHeader) <= kFailedOffset, "area header");


long Futex(std::atomic<uint32_t>* addr, int op, uint32_t val, const timespec* timeout) {
  // Shared, not FUTEX_PRIVATE: the word lives in memory that several processes map.
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(addr), op, val, timeout, nullptr, 0);
}

// What ProbeReads finds at each rank's `probe` address.
alignas(8) const uint64_t kProbeWord = 0x74757474692d736cULL;

// a >= b for round numbers that may wrap around.
bool NotBefore(uint32_t a, uint32_t b) { return static_cast<int32_t>(a - b) >= 0; }
}  // namespace

uint64_t SlotChannel::AreaBytes(const Shape& s) {
  static_assert(sizeof(Ctl) == 128, "two cache lines per rank");
  static_assert(sizeof(SlotHeader) <= kSlotHeaderBytes && offsetof(SlotHeader, data) == 32, "slot header");
  const uint64_t units = static_cast<uint64_t>(s.nranks) * static_cast<uint64_t>(s.units);
  return kHeaderBytes + static_cast<uint64_t>(s.nranks) * sizeof(Ctl) + units * (kSlotHeaderBytes + s.unit_bytes);
}

void SlotChannel::Format(void* area, const Shape& s) {
  AreaHeader h{kMagic, s.nranks, s.units, s.round_units, s.unit_bytes};
  std::memcpy(area, &h, sizeof(h));
  std::atomic_thread_fence(std::memory_order_release);
}

Result<SlotChannel::Shape> SlotChannel::ReadShape(const void* area, size_t bytes) {
  if (bytes < kHeaderBytes) return ProtocolError("slot area of " + std::to_string(bytes) + " bytes is too small");
  AreaHeader h;
  std::memcpy(&h, area, sizeof(h));
  Shape s{h.nranks, h.units, h.unit_bytes, h.round_units};
  if (h.magic != kMagic || s.nranks < 1 || s.nranks > (1 << 16) || s.units < 2 || s.units > (1 << 16) ||
      s.round_units < 1 || s.round_units > s.units / 2 || s.unit_bytes == 0 || s.unit_bytes > (uint64_t{1} << 30) ||
      s.unit_bytes % 64 != 0 || AreaBytes(s) != bytes)
    return ProtocolError("slot area header is malformed (magic " + std::to_string(h.magic) + ", " +
                         std::to_string(h.nranks) + " ranks, " + std::to_string(h.units) + " units of " +
                         std::to_string(h.unit_bytes) + " bytes, up to " + std::to_string(h.round_units) +
                         " per round, area " + std::to_string(bytes) + " bytes)");
  return s;
}

SlotChannel::SlotChannel(void* area, const Shape& s, int rank, std::shared_ptr<void> keep)
    : keep_(std::move(keep)),
      area_(static_cast<char*>(area)),
      headers_(area_ + kHeaderBytes + static_cast<uint64_t>(s.nranks) * sizeof(Ctl)),
      data_(headers_ + static_cast<uint64_t>(s.nranks) * static_cast<uint64_t>(s.units) * kSlotHeaderBytes),
      shape_(s),
      rank_(rank),
      mask_((s.units & (s.units - 1)) == 0 ? static_cast<uint32_t>(s.units) - 1 : 0),
      agreed_(static_cast<size_t>(s.nranks), 0),
      writable_until_(0) {
  CtlOf(rank_)->pid.store(static_cast<uint32_t>(getpid()), std::memory_order_relaxed);
  CtlOf(rank_)->probe.store(reinterpret_cast<uintptr_t>(&kProbeWord), std::memory_order_release);
  PublisherFenceIsLight();  // (registers this process for the sleepers' barriers now: see Wake)
}

Status SlotChannel::ReadPeer(int peer, void* to, uint64_t addr, size_t len) const {
  const auto pid = static_cast<pid_t>(CtlOf(peer)->pid.load(std::memory_order_relaxed));
  Status st = CopyProcessMemory(pid, to, addr, len, /*write=*/false);
  if (st.ok()) return st;
  return st.WithContext("reading " + std::to_string(len) + " bytes of rank " + std::to_string(peer) + "'s buffer");
}

Status SlotChannel::ProbeReads() const {
  for (int p = 0; p < shape_.nranks; ++p) {
    if (p == rank_) continue;
    const uint64_t at = CtlOf(p)->probe.load(std::memory_order_acquire);
    uint64_t word = 0;
    if (at == 0) return UnavailableError("rank " + std::to_string(p) + " has not published its process");
    TUTTI_RETURN_IF_ERROR(ReadPeer(p, &word, at, sizeof(word)));
    if (word != kProbeWord)
      return UnavailableError("rank " + std::to_string(p) + "'s process did not hold the word it published");
  }
  return OkStatus();
}

uint64_t SlotChannel::AgreedWith(int peer) const { return agreed_[static_cast<size_t>(peer)]; }

void SlotChannel::Agreed(int peer, uint64_t seq) { agreed_[static_cast<size_t>(peer)] = seq; }

bool SlotChannel::Writable(uint32_t s) {
  const uint32_t depth = static_cast<uint32_t>(shape_.units);
  // Units up to writable_until_ were writable when last looked: no need to read the other
  // ranks' lines (each read of a line a peer just wrote costs a transfer between cores).
  if (writable_known_ && NotBefore(writable_until_, s)) return true;
  const uint32_t need = s - depth;
  uint32_t least = s;  // the earliest unit finished by every rank
  for (int r = 0; r < shape_.nranks; ++r) {
    const uint32_t d = CtlOf(r)->done.load(std::memory_order_acquire);
    if (!NotBefore(d, need)) return false;
    if (r == 0 || !NotBefore(d, least)) least = d;
  }
  writable_until_ = least + depth;
  writable_known_ = true;
  return true;
}

void SlotChannel::Put(uint32_t u, const SlotDesc& d, bool fill) {
  SlotHeader* h = Header(rank_, u);
  h->coll = d.coll;
  h->type = d.type;
  h->op = d.op;
  h->fill = fill ? 1 : 0;
  h->root = d.root;
  h->part = d.part;
  h->count = d.count;
  h->parts = d.parts;
  h->trail = d.trail;
  h->round.store(u, std::memory_order_release);
}

void SlotChannel::Publish(const Span& sp, const SlotDesc& d, bool wake) {
  Put(sp.data, d, false);
  // The other units of the round say that they are filler: a rank whose rounds fell out of step
  // with ours and waits for one of them finds another call there, not a header that never comes.
  for (uint32_t u = sp.start; u != sp.data; ++u) Put(u, d, true);
  for (uint32_t u = sp.data + 1; u != sp.end + 1; ++u) Put(u, d, true);
  if (wake) Wake();
}

void SlotChannel::Finish(uint32_t u, bool wake) {
  CtlOf(rank_)->done.store(u, std::memory_order_release);
  if (wake) Wake();
}

uint32_t SlotChannel::PublishedBy(int peer, uint32_t s) const {
  return Header(peer, s)->round.load(std::memory_order_acquire);
}

uint32_t SlotChannel::FinishedBy(int peer) const { return CtlOf(peer)->done.load(std::memory_order_acquire); }

void SlotChannel::GiveUp(uint32_t u) {
  // (Only this rank writes its words, one thread at a time: under the channel's lock or solo.)
  Ctl* c = CtlOf(rank_);
  if (c->gave_up.load(std::memory_order_relaxed) != 0 &&
      static_cast<int32_t>(u - c->gave_up_unit.load(std::memory_order_relaxed)) >= 0)
    return;
  c->gave_up_unit.store(u, std::memory_order_relaxed);
  c->gave_up.store(1, std::memory_order_release);
}

bool SlotChannel::GaveUp(int peer, uint32_t u) const {
  const Ctl* c = CtlOf(peer);
  if (c->gave_up.load(std::memory_order_acquire) == 0) return false;
  return static_cast<int32_t>(c->gave_up_unit.load(std::memory_order_relaxed) - u) <= 0;
}

std::atomic<uint32_t>* SlotChannel::FailedWord() const {
  return reinterpret_cast<std::atomic<uint32_t>*>(area_ + kFailedOffset);
}

void SlotChannel::MarkFailed(const std::string& why) {
  uint32_t none = 0;
  if (FailedWord()->compare_exchange_strong(none, static_cast<uint32_t>(rank_) + 1, std::memory_order_seq_cst)) {
    // Only the first marker writes the reason; its length, stored last, publishes it.
    auto* len = reinterpret_cast<std::atomic<uint32_t>*>(area_ + kReasonOffset);
    const size_t n = std::min<size_t>(why.size(), kReasonBytes - sizeof(uint32_t));
    std::memcpy(area_ + kReasonOffset + sizeof(uint32_t), why.data(), n);
    len->store(static_cast<uint32_t>(n), std::memory_order_release);
  }
  // Everyone who sleeps wakes up and sees it.
  for (int r = 0; r < shape_.nranks; ++r) {
    Ctl* c = CtlOf(r);
    c->bell.fetch_add(1, std::memory_order_seq_cst);
    Futex(&c->bell, FUTEX_WAKE, INT_MAX, nullptr);
  }
}

int SlotChannel::FailedBy() const {
  return static_cast<int>(FailedWord()->load(std::memory_order_acquire)) - 1;
}

std::string SlotChannel::FailureReason() const {
  const auto* len = reinterpret_cast<const std::atomic<uint32_t>*>(area_ + kReasonOffset);
  const uint32_t n = std::min<uint32_t>(len->load(std::memory_order_acquire), kReasonBytes - sizeof(uint32_t));
  return std::string(area_ + kReasonOffset + sizeof(uint32_t), n);
}

void SlotChannel::Wake() {
  // Pairs with PrepareSleep: either the sleeper sees what we stored, or we see it sleeping
  // (core/base/wake_fence.h).
  PublisherFence();
  for (int r = 0; r < shape_.nranks; ++r) {
    if (r == rank_) continue;
    Ctl* c = CtlOf(r);
    if (c->sleepers.load(std::memory_order_relaxed) == 0) continue;
    c->bell.fetch_add(1, std::memory_order_seq_cst);
    Futex(&c->bell, FUTEX_WAKE, INT_MAX, nullptr);
  }
}

uint32_t SlotChannel::PrepareSleep() {
  Ctl* c = CtlOf(rank_);
  c->sleepers.fetch_add(1, std::memory_order_seq_cst);
  SleeperFence();
  return c->bell.load(std::memory_order_seq_cst);
}

void SlotChannel::Sleep(uint32_t seen, int timeout_us) {
  timespec ts{timeout_us / 1000000, (timeout_us % 1000000) * 1000L};
  Futex(&CtlOf(rank_)->bell, FUTEX_WAIT, seen, &ts);  // at once if the bell rang since PrepareSleep
}

void SlotChannel::EndSleep() { CtlOf(rank_)->sleepers.fetch_sub(1, std::memory_order_seq_cst); }

}  // namespace tutti
