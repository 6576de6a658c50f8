#include "core/coll/buffer_pool.h"

#include <algorithm>
#include <new>
#include <string>

namespace tutti {

BufferAllocator BufferAllocator::Host() {
  BufferAllocator a;
  a.alloc = [](size_t bytes) { return new (std::nothrow) char[bytes]; };
  a.free = [](char* p) { delete[] p; };
  return a;
}

Result<std::shared_ptr<char>> BufferPool::Get(size_t bytes) {
  if (bytes == 0) return std::shared_ptr<char>();
  char* p = nullptr;
  size_t got = 0;
  std::vector<char*> victims;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!allocator_.free_in_background) TrimLocked(Clock::now(), &victims);
    // The smallest free buffer that is large enough.
    auto best = free_.end();
    for (auto it = free_.begin(); it != free_.end(); ++it)
      if (it->bytes >= bytes && (best == free_.end() || it->bytes < best->bytes)) best = it;
    if (best != free_.end()) {
      p = best->p;
      got = best->bytes;
      kept_bytes_ -= got;
      free_.erase(best);
    }
  }
  FreeAll(victims);
  if (p == nullptr) {
    p = allocator_.alloc(bytes);
    if (p == nullptr) {
      // Give back what we keep and try once more before reporting.
      {
        std::lock_guard<std::mutex> lock(mu_);
        for (const Free& f : free_) allocator_.free(f.p);
        free_.clear();
        kept_bytes_ = 0;
      }
      p = allocator_.alloc(bytes);
      if (p == nullptr)
        return SystemError("out of memory: could not allocate " + std::to_string(bytes) + " bytes of " +
                           allocator_.what);
    }
    got = bytes;
  }
  std::shared_ptr<BufferPool> self = shared_from_this();
  return std::shared_ptr<char>(p, [self, got](char* q) { self->Put(q, got); });
}

void BufferPool::Put(char* p, size_t bytes) {
  std::vector<char*> victims;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const Clock::time_point now = Clock::now();
    free_.push_back({p, bytes, now});
    kept_bytes_ += bytes;
    if (!allocator_.free_in_background) TrimLocked(now, &victims);
  }
  FreeAll(victims);
}

void BufferPool::TrimIdle() {
  std::vector<char*> victims;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!free_.empty()) TrimLocked(Clock::now(), &victims);
  }
  FreeAll(victims);
}

void BufferPool::FreeAll(const std::vector<char*>& victims) const {
  for (char* p : victims) allocator_.free(p);
}

void BufferPool::TrimLocked(Clock::time_point now, std::vector<char*>* victims) {
  for (auto it = free_.begin(); it != free_.end();) {
    if (now - it->since > max_idle_) {
      kept_bytes_ -= it->bytes;
      victims->push_back(it->p);
      it = free_.erase(it);
    } else {
      ++it;
    }
  }
  // Over the limits: drop the smallest buffers first (large ones are the costly ones to map).
  while (!free_.empty() && (free_.size() > kMaxKeptBuffers || kept_bytes_ > kMaxKeptBytes)) {
    auto smallest = std::min_element(free_.begin(), free_.end(),
                                     [](const Free& a, const Free& b) { return a.bytes < b.bytes; });
    kept_bytes_ -= smallest->bytes;
    victims->push_back(smallest->p);
    free_.erase(smallest);
  }
}

size_t BufferPool::kept_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return kept_bytes_;
}

BufferPool::~BufferPool() {
  for (const Free& f : free_) allocator_.free(f.p);
}

}  // namespace tutti
