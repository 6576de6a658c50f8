// Reusable buffers for collectives (scratch space, private copies of in-place inputs).
//
// A fresh large allocation costs a page fault per 4 KiB the first time it is touched, which
// for a 32 MiB collective is slower than the collective itself; the pool hands back buffers
// that are already mapped. Buffers return to the pool when the last reference goes.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

namespace tutti {

class BufferPool : public std::enable_shared_from_this<BufferPool> {
 public:
  // A buffer of at least `bytes` (nullptr for 0).
  std::shared_ptr<char> Get(size_t bytes);
  // How many bytes the pool keeps for reuse at most.
  static constexpr size_t kMaxKeptBytes = size_t{1} << 30;
  static constexpr size_t kMaxKeptBuffers = 8;

 private:
  void Put(char* p, size_t bytes);
  struct Free {
    char* p;
    size_t bytes;
  };
  std::mutex mu_;
  std::vector<Free> free_;
  size_t kept_bytes_ = 0;

 public:
  ~BufferPool();
};

}  // namespace tutti
