#include "transport/shm/shm_ring.h"

#include <cstring>
#include <new>

namespace tutti {

void ShmRing::Format(void* mem, size_t capacity) {
  auto* h = new (mem) ShmRingHeader;
  h->head.store(0, std::memory_order_relaxed);
  h->tail.store(0, std::memory_order_relaxed);
  h->capacity = capacity;
  std::atomic_thread_fence(std::memory_order_release);
}

Status ShmRing::Attach(void* mem, size_t expected_capacity) {
  hdr_ = static_cast<ShmRingHeader*>(mem);
  if (expected_capacity == 0 || (expected_capacity & (expected_capacity - 1)) != 0)
    return InvalidArgument("shm ring capacity must be a power of two");
  if (hdr_->capacity != expected_capacity)
    return ProtocolError("shm ring capacity " + std::to_string(hdr_->capacity) +
                         " differs from the expected " + std::to_string(expected_capacity));
  capacity_ = expected_capacity;
  mask_ = capacity_ - 1;
  data_ = reinterpret_cast<char*>(hdr_) + sizeof(ShmRingHeader);
  cached_tail_ = hdr_->tail.load(std::memory_order_acquire);
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
  const uint64_t head = hdr_->head.load(std::memory_order_relaxed);
  if (head + need - cached_tail_ > capacity_) {
    cached_tail_ = hdr_->tail.load(std::memory_order_acquire);
    if (head + need - cached_tail_ > capacity_) return false;
  }
  CopyIn(head, &h, kFrameHeaderSize);
  if (h.payload_len > 0) CopyIn(head + kFrameHeaderSize, payload, h.payload_len);
  hdr_->head.store(head + need, std::memory_order_release);
  return true;
}

Result<bool> ShmRing::Peek(FrameHeader* h, uint64_t max_payload) {
  const uint64_t tail = hdr_->tail.load(std::memory_order_relaxed);
  const uint64_t head = hdr_->head.load(std::memory_order_acquire);
  if (head == tail) return false;
  const uint64_t avail = head - tail;
  if (avail > capacity_ || avail < kFrameHeaderSize)
    return ProtocolError("corrupt shm ring positions (head " + std::to_string(head) + ", tail " +
                         std::to_string(tail) + ")");
  CopyOut(tail, h, kFrameHeaderSize);
  const uint64_t limit = max_payload < this->max_payload() ? max_payload : this->max_payload();
  TUTTI_RETURN_IF_ERROR(ValidateEnvelope(*h, limit));
  if (ShmFrameBytes(h->payload_len) > avail)
    return ProtocolError("shm frame longer than the data published in the ring");
  return true;
}

void ShmRing::Consume(const FrameHeader& h, void* dst) {
  const uint64_t tail = hdr_->tail.load(std::memory_order_relaxed);
  if (dst != nullptr && h.payload_len > 0) CopyOut(tail + kFrameHeaderSize, dst, h.payload_len);
  hdr_->tail.store(tail + ShmFrameBytes(h.payload_len), std::memory_order_release);
}

}  // namespace tutti
