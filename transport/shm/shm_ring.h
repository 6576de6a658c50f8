// A single-producer single-consumer ring of frames in shared memory.
//
// A frame is a stamp word, the header and the payload, padded to 8 bytes. The writer copies
// header and payload and then publishes the frame by storing its stamp (a function of the frame's
// position) with release; the reader, polling the word at its own position, sees either the whole
// frame or an old stamp. So the reader of a small frame misses on its line or two only, with no
// separate head counter to fetch first (2-rank ping-pong of 8 bytes: 0.53 -> 0.36 us). Padding
// frames to whole lines instead made streams of small frames slower (send_recv of 8 B, both ways
// at once: 0.73 against 0.62 us).
// Positions grow forever (64-bit) and are reduced modulo the power-of-two capacity; the reader
// publishes its position (`tail`) for the writer, which reads it only when the ring looks full.
// The reader treats the ring as untrusted: lengths are checked before any copy.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "core/base/status.h"
#include "transport/frame.h"

namespace tutti {

struct alignas(64) ShmRingHeader {
  std::atomic<uint64_t> tail;  // written by the consumer
  char pad0[56];
  uint64_t capacity;  // bytes of data after this header, a power of two
  uint64_t salt;      // mixed into every stamp: chosen by Format, so no earlier ring's match
  char pad1[48];
};
static_assert(sizeof(ShmRingHeader) == 128, "ring header layout");

// Bytes in front of a frame's header: the stamp that publishes it.
constexpr size_t kShmStampBytes = 8;

class ShmRing {
 public:
  // Bytes of shared memory a ring of `capacity` data bytes needs.
  static size_t BytesFor(size_t capacity) { return sizeof(ShmRingHeader) + capacity; }
  // Initialises a ring in fresh memory (creator only).
  static void Format(void* mem, size_t capacity);

  ShmRing() = default;
  // Attaches to a ring in `mem`; `expected_capacity` guards against a corrupt header.
  Status Attach(void* mem, size_t expected_capacity);

  // Largest payload a single frame may carry.
  size_t max_payload() const { return capacity_ / 2 - kShmStampBytes - kFrameHeaderSize; }

  // Producer: writes the frame if there is room now; false if the ring is too full.
  bool TryWrite(const FrameHeader& h, const void* payload);

  // Consumer: if a frame is waiting, validates its header into *h and returns true.
  Result<bool> Peek(FrameHeader* h, uint64_t max_payload);
  // Consumer: copies the payload of the peeked frame to dst (nullptr: skip) and releases it.
  void Consume(const FrameHeader& h, void* dst);

  // The stamp of a frame at `pos`: distinct for every position (an odd multiplier is a bijection),
  // and the ring's salt keeps stale lines of memory used before from passing for new frames.
  uint64_t StampFor(uint64_t pos) const { return (pos * 0x9E3779B97F4A7C15ull) ^ salt_; }

 private:
  std::atomic_ref<uint64_t> StampAt(uint64_t pos) const {
    return std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(data_ + (pos & mask_)));
  }
  void CopyOut(uint64_t pos, void* dst, size_t n) const;
  void CopyIn(uint64_t pos, const void* src, size_t n);

  ShmRingHeader* hdr_ = nullptr;
  char* data_ = nullptr;
  uint64_t capacity_ = 0;
  uint64_t mask_ = 0;
  uint64_t salt_ = 0;
  uint64_t head_ = 0;         // producer: where its next frame goes
  uint64_t cached_tail_ = 0;  // producer's last view of tail
  uint64_t tail_ = 0;         // consumer: where the next frame is
};

inline uint64_t ShmFrameBytes(uint64_t payload_len) {
  return kShmStampBytes + kFrameHeaderSize + ((payload_len + 7) & ~uint64_t{7});
}

}  // namespace tutti
