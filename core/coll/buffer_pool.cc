#include "core/coll/buffer_pool.h"

#include <algorithm>

namespace tutti {

std::shared_ptr<char> BufferPool::Get(size_t bytes) {
  if (bytes == 0) return nullptr;
  char* p = nullptr;
  size_t got = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
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
  if (p == nullptr) {
    p = new char[bytes];
    got = bytes;
  }
  std::shared_ptr<BufferPool> self = shared_from_this();
  return std::shared_ptr<char>(p, [self, got](char* q) { self->Put(q, got); });
}

void BufferPool::Put(char* p, size_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  free_.push_back({p, bytes});
  kept_bytes_ += bytes;
  // Over the limits: drop the smallest buffers first (large ones are the costly ones to map).
  while (!free_.empty() && (free_.size() > kMaxKeptBuffers || kept_bytes_ > kMaxKeptBytes)) {
    auto smallest = std::min_element(free_.begin(), free_.end(),
                                     [](const Free& a, const Free& b) { return a.bytes < b.bytes; });
    kept_bytes_ -= smallest->bytes;
    delete[] smallest->p;
    free_.erase(smallest);
  }
}

BufferPool::~BufferPool() {
  for (const Free& f : free_) delete[] f.p;
}

}  // namespace tutti
