// A single-producer single-consumer ring of frames in shared memory.
//
// The writer copies a whole frame (header + payload, padded to 8 bytes) and then publishes it by
// advancing `head` with a release store; the reader sees either the whole frame or nothing.
// Positions grow forever (64-bit) and are reduced modulo the power-of-two capacity. The reader
// treats the ring as untrusted: positions and lengths are checked before any copy.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "core/base/status.h"
#include "transport/frame.h"

namespace tutti {

struct alignas(64) ShmRingHeader {
  std::atomic<uint64_t> head;  // written by the producer
  char pad0[56];
  std::atomic<uint64_t> tail;  // written by the consumer
  char pad1[56];
  uint64_t capacity;  // bytes of data after this header, a power of two
  char pad2[56];
};
static_assert(sizeof(ShmRingHeader) == 192, "ring header layout");

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
  size_t max_payload() const { return capacity_ / 2 - kFrameHeaderSize; }

  // Producer: writes the frame if there is room now; false if the ring is too full.
  bool TryWrite(const FrameHeader& h, const void* payload);

  // Consumer: if a frame is waiting, validates its header into *h and returns true.
  Result<bool> Peek(FrameHeader* h, uint64_t max_payload);
  // Consumer: copies the payload of the peeked frame to dst (nullptr: skip) and releases it.
  void Consume(const FrameHeader& h, void* dst);

 private:
  void CopyOut(uint64_t pos, void* dst, size_t n) const;
  void CopyIn(uint64_t pos, const void* src, size_t n);

  ShmRingHeader* hdr_ = nullptr;
  char* data_ = nullptr;
  uint64_t capacity_ = 0;
  uint64_t mask_ = 0;
  uint64_t cached_tail_ = 0;  // producer's last view of tail
};

inline uint64_t ShmFrameBytes(uint64_t payload_len) {
  return kFrameHeaderSize + ((payload_len + 7) & ~uint64_t{7});
}

}  // namespace tutti
