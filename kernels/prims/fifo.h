// One direction of one connection (a sender rank, a receiver rank, one schedule stream): a ring
// of `nslots` slots in memory both sides can reach (mapped device memory, pinned host memory, or
// plain memory for threads of one process), and two counters.
//
//   tail  pieces the sender has written (written by the sender only)
//   head  pieces the receiver has consumed (written by the receiver only): the sender may write
//         piece s into slot s % nslots once head + nslots > s (credits, returned per piece)
//
// Two protocols move a piece into a slot:
//  - Simple: the piece's bytes, then its size, then a release store of tail; the receiver waits
//    for tail with an acquire load. One fence per piece: for bandwidth.
//  - LL (low latency): every 8-byte word carries 4 bytes and a 4-byte flag, stored together, so
//    a word is valid when its flag says the piece's sequence number: no fence, no counter to wait
//    for. Word 0 carries the piece's size (a receiver expecting another size fails at once,
//    naming the peer), word 1 its call tag (below), the data follow, so a little under half the
//    slot's bytes carry data. For small messages. The sender still advances tail after the
//    words, for a proxy forwarding the piece to another host (proxy.h); the receiver goes by the
//    flags alone.
// Every piece carries the sender's call tag (Simple: the high half of its size word), a digest
// of the call and every call before it on the communicator: a receiver whose own tag differs
// fails at once, naming the peer, where the ranks called different collectives (or the same one
// with another type, op, root or algorithm) whose pieces happen to have the same sizes.
// Counters are 64-bit and never wrap in practice; LL flags are 32-bit and do: the flag of piece s
// is s mod (2^32 - 1) + 1, never 0 (what zeroed memory holds), and differs from the flag of the
// piece that was in the same slot before (s - nslots) as long as nslots < 2^32 - 1. (Words past a
// shorter piece keep older flags; one could match again only after a multiple of 2^32 - 1 pieces
// went through the slot, and the size word tells the receiver which words to read.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/host_device.h"
#include "kernels/prims/team.h"

namespace tutti::prims {

enum class Proto : uint8_t { kSimple = 0, kLL = 1 };

struct FifoGeom {
  uint32_t nslots = 4;
  uint32_t slot_bytes = 4096;  // a multiple of 16
  Proto proto = Proto::kSimple;
};

// The counters, each on a line of its own (the other side polls it).
struct alignas(64) ConnCtl {
  uint64_t tail;
  uint64_t pad0[7];
  uint64_t head;
  uint64_t pad1[7];
};

// Memory of one connection: ConnCtl, then nslots 8-byte sizes (Simple), then the slots.
TUTTI_HD TUTTI_INLINE size_t SizesOffset() { return sizeof(ConnCtl); }
TUTTI_HD TUTTI_INLINE size_t SlotsOffset(const FifoGeom& g) {
  return (SizesOffset() + 8 * static_cast<size_t>(g.nslots) + 63) / 64 * 64;
}
TUTTI_HD TUTTI_INLINE size_t ConnBytes(const FifoGeom& g) {
  return SlotsOffset(g) + static_cast<size_t>(g.nslots) * g.slot_bytes;
}
// Data bytes a piece may carry (LL: 4 per 8-byte word, less the size and tag words).
TUTTI_HD TUTTI_INLINE uint32_t PieceCapacity(const FifoGeom& g) {
  return g.proto == Proto::kLL ? g.slot_bytes / 2 - 8 : g.slot_bytes;
}

// Simple: the word beside a slot, the piece's size and its call tag.
TUTTI_HD TUTTI_INLINE uint64_t SizeWord(uint32_t bytes, uint32_t tag) {
  return static_cast<uint64_t>(tag) << 32 | bytes;
}
TUTTI_HD TUTTI_INLINE uint32_t SizeOf(uint64_t size_word) { return static_cast<uint32_t>(size_word); }
TUTTI_HD TUTTI_INLINE uint32_t TagOf(uint64_t size_word) { return static_cast<uint32_t>(size_word >> 32); }

TUTTI_HD TUTTI_INLINE uint64_t* SlotSizes(ConnCtl* c) {
  return reinterpret_cast<uint64_t*>(reinterpret_cast<uint8_t*>(c) + SizesOffset());
}
TUTTI_HD TUTTI_INLINE uint8_t* Slot(ConnCtl* c, const FifoGeom& g, uint64_t seq) {
  return reinterpret_cast<uint8_t*>(c) + SlotsOffset(g) + static_cast<size_t>(seq % g.nslots) * g.slot_bytes;
}

TUTTI_HD TUTTI_INLINE uint32_t LLFlag(uint64_t seq) { return static_cast<uint32_t>(seq % 0xffffffffull) + 1; }
// 8-byte words of an LL piece of `bytes` data bytes: the size word, the tag word, then the data
// words.
constexpr uint32_t kLLHeadWords = 2;
TUTTI_HD TUTTI_INLINE uint32_t LLDataWords(uint32_t bytes) { return (bytes + 3) / 4; }
TUTTI_HD TUTTI_INLINE uint32_t LLWords(uint32_t bytes) { return kLLHeadWords + LLDataWords(bytes); }

TUTTI_HD TUTTI_INLINE uint32_t Load32(const uint8_t* p) {
#if defined(__CUDA_ARCH__)
  return *reinterpret_cast<const uint32_t*>(p);
#else
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
#endif
}
TUTTI_HD TUTTI_INLINE void Store32(uint8_t* p, uint32_t v) {
#if defined(__CUDA_ARCH__)
  *reinterpret_cast<uint32_t*>(p) = v;
#else
  std::memcpy(p, &v, 4);
#endif
}

// The sender may write piece `seq` (its slot is free).
TUTTI_HD TUTTI_INLINE bool HasCredit(ConnCtl* c, const FifoGeom& g, uint64_t seq) {
  return LoadAcquire(&c->head) + g.nslots > seq;
}

// Simple: piece `seq` is published.
TUTTI_HD TUTTI_INLINE bool SimpleArrived(ConnCtl* c, uint64_t seq) { return LoadAcquire(&c->tail) > seq; }

// LL: piece `seq`'s size and tag words have arrived; *bytes and *tag get what they carry.
TUTTI_HD TUTTI_INLINE bool LLHeader(ConnCtl* c, const FifoGeom& g, uint64_t seq, uint32_t* bytes, uint32_t* tag) {
  const uint64_t* words = reinterpret_cast<const uint64_t*>(Slot(c, g, seq));
  const uint32_t flag = LLFlag(seq);
  const uint64_t w0 = LoadWord(&words[0]);
  if (static_cast<uint32_t>(w0 >> 32) != flag) return false;
  const uint64_t w1 = LoadWord(&words[1]);
  if (static_cast<uint32_t>(w1 >> 32) != flag) return false;
  *bytes = static_cast<uint32_t>(w0);
  *tag = static_cast<uint32_t>(w1);
  return true;
}

// LL: this member's share of piece `seq`'s data words carries the piece's flag.
template <class T>
TUTTI_HD TUTTI_INLINE bool LLArrivedPart(const T& team, ConnCtl* c, const FifoGeom& g, uint64_t seq,
                                         uint32_t bytes) {
  const uint64_t* words = reinterpret_cast<const uint64_t*>(Slot(c, g, seq)) + kLLHeadWords;
  const uint32_t flag = LLFlag(seq);
  const uint32_t n = LLDataWords(bytes);
  for (uint32_t i = team.tid(); i < n; i += team.size()) {
    if (static_cast<uint32_t>(LoadWord(&words[i]) >> 32) != flag) return false;
  }
  return true;
}

// LL: piece `seq`'s data (its flags checked) into `out` (this member's share of the words).
// `out` has room for LLDataWords(bytes) * 4 bytes.
template <class T>
TUTTI_HD TUTTI_INLINE void LLUnpackPart(const T& team, ConnCtl* c, const FifoGeom& g, uint64_t seq,
                                        uint32_t bytes, uint8_t* out) {
  const uint64_t* words = reinterpret_cast<const uint64_t*>(Slot(c, g, seq)) + kLLHeadWords;
  const uint32_t n = LLDataWords(bytes);
  for (uint32_t i = team.tid(); i < n; i += team.size()) {
    Store32(out + 4 * static_cast<size_t>(i), static_cast<uint32_t>(LoadWord(&words[i])));
  }
}

// LL: the size word, the tag word and `data` (LLDataWords(bytes) * 4 readable bytes) into piece
// `seq`'s words with its flag.
template <class T>
TUTTI_HD TUTTI_INLINE void LLPackPart(const T& team, ConnCtl* c, const FifoGeom& g, uint64_t seq,
                                      uint32_t bytes, uint32_t tag, const uint8_t* data) {
  uint64_t* words = reinterpret_cast<uint64_t*>(Slot(c, g, seq));
  const uint64_t flag = static_cast<uint64_t>(LLFlag(seq)) << 32;
  const uint32_t n = LLWords(bytes);
  for (uint32_t i = team.tid(); i < n; i += team.size()) {
    const uint32_t low = i == 0 ? bytes : i == 1 ? tag : Load32(data + 4 * static_cast<size_t>(i - kLLHeadWords));
    StoreWord(&words[i], flag | low);
  }
}

}  // namespace tutti::prims
