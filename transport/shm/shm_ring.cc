#include "transport/shm/shm_ring.h"

#include <cstring>
#include <new>
#include <random>

namespace tutti {

void ShmRing::Format(void* mem, size_t capacity) {
  auto* h = new (mem) ShmRingHeader;
  h->tail.store(0, std::memory_order_relaxed);
  h->capacity = capacity;
  std::random_device rd;
  // Never zero, the content of fresh memory at position 0.
  h->salt = ((uint64_t{rd()} << 32) | rd()) | 1;
  std::atomic_thread_fence(std::memory_order_release);
}

Status ShmRing::Attach(void* mem, size_t expected_capacity) {
  hdr_ = static_cast<ShmRingHeader*>(mem);
  if (expected_capacity < 128 || (expected_capacity & (expected_capacity - 1)) != 0)
    return InvalidArgument("shm ring capacity must be a power of two of at least 128 bytes");
  if (hdr_->capacity != expected_capacity)
    return ProtocolError("shm ring capacity " + std::to_string(hdr_->capacity) +
                         " differs from the expected " + std::to_string(expected_capacity));
  capacity_ = expected_capacity;
  mask_ = capacity_ - 1;
  salt_ = hdr_->salt;
  data_ = reinterpret_cast<char*>(hdr_) + sizeof(ShmRingHeader);
  tail_ = hdr_->tail.load(std::memory_order_acquire);
  cached_tail_ = tail_;
  head_ = tail_;
  return OkStatus();
}

void ShmRing::CopyIn(uint64_t pos, const void* src, size_t n) {
  size_t off = pos & mask_;
  size_t first = n < capacity_ - off ? n : capacity_ - off;
  std::memcpy(data_ + off, src, first);
  if (first < n) std::memcpy(data_, static_cast<const char*>(src) + first, n - first);
}

void ShmRing::CopyOut(uint64_t pos, void* dst, size_t n) const {
  size_t off = pos & mask_;
  size_t first = n < capacity_ - off ? n : capacity_ - off;
  std::memcpy(dst, data_ + off, first);
  if (first < n) std::memcpy(static_cast<char*>(dst) + first, data_, n - first);
}

bool ShmRing::TryWrite(const FrameHeader& h, const void* payload) {
  const uint64_t need = ShmFrameBytes(h.payload_len);
  if (head_ + need - cached_tail_ > capacity_) {
    cached_tail_ = hdr_->tail.load(std::memory_order_acquire);
    if (head_ + need - cached_tail_ > capacity_) return false;
  }
  CopyIn(head_ + kShmStampBytes, &h, kFrameHeaderSize);
  if (h.payload_len > 0) CopyIn(head_ + kShmStampBytes + kFrameHeaderSize, payload, h.payload_len);
  StampAt(head_).store(StampFor(head_), std::memory_order_release);
  head_ += need;
  return true;
}

Result<bool> ShmRing::Peek(FrameHeader* h, uint64_t max_payload) {
  if (StampAt(tail_).load(std::memory_order_acquire) != StampFor(tail_)) return false;
  CopyOut(tail_ + kShmStampBytes, h, kFrameHeaderSize);
  const uint64_t limit = max_payload < this->max_payload() ? max_payload : this->max_payload();
  TUTTI_RETURN_IF_ERROR(ValidateEnvelope(*h, limit));
  return true;
}

void ShmRing::Consume(const FrameHeader& h, void* dst) {
  if (dst != nullptr && h.payload_len > 0) CopyOut(tail_ + kShmStampBytes + kFrameHeaderSize, dst, h.payload_len);
  tail_ += ShmFrameBytes(h.payload_len);
  hdr_->tail.store(tail_, std::memory_order_release);
}

}  // namespace tutti
