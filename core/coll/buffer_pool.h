// Reusable buffers for collectives (scratch space, private copies of in-place inputs).
//
// A fresh large allocation costs a page fault per 4 KiB the first time it is touched, which
// for a 32 MiB collective is slower than the collective itself; the pool hands back buffers
// that are already mapped. Buffers return to the pool when the last reference goes. The pool
// keeps at most kMaxKeptBuffers / kMaxKeptBytes, and a buffer nobody asked for during
// kMaxIdle is released (also while no collective runs), so memory taken by one large call does
// not stay forever.
//
// Allocation failure is an error value (never an exception): a count that passes the size
// checks may still be far more than the machine can give.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <mutex>
#include <vector>

#include "core/base/status.h"

namespace tutti {

// Where a pool's memory comes from: host memory by default; pinned host or device memory for
// the CUDA path (core/exec/device_runtime.h). `alloc` returns nullptr when it cannot.
struct BufferAllocator {
  std::function<char*(size_t)> alloc;
  std::function<void(char*)> free;
  std::string what = "collective scratch space";  // for the out-of-memory message
  // Buffers are freed only by TrimIdle (the progress thread), never by a call's Get or Put:
  // for CUDA memory, whose release waits for every kernel on the device, peers' fused kernels
  // included, which may be waiting for this rank's call.
  bool free_in_background = false;
  static BufferAllocator Host();
};

class BufferPool : public std::enable_shared_from_this<BufferPool> {
 public:
  static constexpr std::chrono::milliseconds kMaxIdle{10000};
  explicit BufferPool(std::chrono::milliseconds max_idle = kMaxIdle, BufferAllocator allocator = BufferAllocator::Host())
      : max_idle_(max_idle), allocator_(std::move(allocator)) {}
  ~BufferPool();
  // A buffer of at least `bytes` (nullptr for 0); kSystemError "out of memory" if it cannot
  // be had.
  Result<std::shared_ptr<char>> Get(size_t bytes);
  // Bytes held for reuse now (not counting buffers in use).
  size_t kept_bytes() const;
  // Releases buffers idle for kMaxIdle; cheap (at most kMaxKeptBuffers to look at). The
  // communicator's progress thread calls it, so an idle communicator gives its memory back too.
  void TrimIdle();

  static constexpr size_t kMaxKeptBytes = size_t{1} << 30;
  static constexpr size_t kMaxKeptBuffers = 8;

 private:
  using Clock = std::chrono::steady_clock;
  struct Free {
    char* p;
    size_t bytes;
    Clock::time_point since;
  };
  void Put(char* p, size_t bytes);
  // Takes buffers over the limits or idle too long out of the pool into *victims (mu_ held);
  // the caller frees them after unlocking.
  void TrimLocked(Clock::time_point now, std::vector<char*>* victims);
  void FreeAll(const std::vector<char*>& victims) const;

  const std::chrono::milliseconds max_idle_;
  const BufferAllocator allocator_;
  mutable std::mutex mu_;
  std::vector<Free> free_;
  size_t kept_bytes_ = 0;
};

}  // namespace tutti
