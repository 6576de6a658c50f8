// A named POSIX shared-memory segment (shm_open + mmap), unmapped when destroyed.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "core/base/status.h"

namespace tutti {

class ShmSegment {
 public:
  // Creates a new segment under a fresh unique name (O_EXCL), zero-filled.
  static Result<std::unique_ptr<ShmSegment>> Create(size_t bytes);
  // Maps an existing segment, which must be exactly `bytes` long.
  static Result<std::unique_ptr<ShmSegment>> Open(const std::string& name, size_t bytes);
  ~ShmSegment();
  ShmSegment(const ShmSegment&) = delete;
  ShmSegment& operator=(const ShmSegment&) = delete;

  const std::string& name() const { return name_; }
  void* data() const { return data_; }
  size_t size() const { return size_; }
  // Removes the name (the memory stays mapped while anyone maps it). Idempotent.
  void Unlink();
  // Maps every page into this process now (MADV_POPULATE_WRITE), instead of one page fault at a
  // time on first use: the first lap of a connection's 4 MiB rings took a fault per frame or two
  // (2-rank send_recv of 4 KiB: 22-32 us per call in its first 1000 calls, 1.5-1.7 us after).
  // Best effort: false where the kernel lacks it (before Linux 5.14); the pages then fault in
  // as they are used.
  bool Populate();

 private:
  ShmSegment(std::string name, void* data, size_t size) : name_(std::move(name)), data_(data), size_(size) {}
  std::string name_;
  void* data_;
  size_t size_;
  bool unlinked_ = false;
};

}  // namespace tutti
