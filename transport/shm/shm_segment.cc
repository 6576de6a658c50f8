#include "transport/shm/shm_segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <random>

namespace tutti {

namespace {
std::string FreshName() {
  static std::atomic<uint64_t> counter{0};
  static const uint64_t salt = std::random_device{}();
  return "/tutti-" + std::to_string(getpid()) + "-" + std::to_string(counter.fetch_add(1)) + "-" +
         std::to_string(salt % 1000000);
}
}  // namespace

Result<std::unique_ptr<ShmSegment>> ShmSegment::Create(size_t bytes) {
  std::string name = FreshName();
  int fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  if (fd < 0) return SystemError("shm_open(" + name + ")");
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    int err = errno;
    close(fd);
    shm_unlink(name.c_str());
    return SystemError("ftruncate shm segment " + name + " to " + std::to_string(bytes), err);
  }
  // Reserve the memory now: a tmpfs that is full (a container's small /dev/shm) then fails here,
  // with a message, instead of killing the process with SIGBUS when a page is first touched.
  if (int err = posix_fallocate(fd, 0, static_cast<off_t>(bytes)); err != 0 && err != EOPNOTSUPP && err != EINVAL) {
    close(fd);
    shm_unlink(name.c_str());
    return SystemError("reserving " + std::to_string(bytes) + " bytes for shm segment " + name +
                           " (is /dev/shm full or too small?)",
                       err);
  }
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  int err = errno;
  close(fd);
  if (p == MAP_FAILED) {
    shm_unlink(name.c_str());
    return SystemError("mmap shm segment " + name, err);
  }
  return std::unique_ptr<ShmSegment>(new ShmSegment(name, p, bytes));
}

Result<std::unique_ptr<ShmSegment>> ShmSegment::Open(const std::string& name, size_t bytes) {
  if (name.empty() || name[0] != '/' || name.size() > 200 || name.find('/', 1) != std::string::npos)
    return ProtocolError("malformed shm segment name \"" + name + "\"");
  int fd = shm_open(name.c_str(), O_RDWR, 0);
  if (fd < 0) return SystemError("shm_open(" + name + ")");
  struct stat st;
  if (fstat(fd, &st) != 0 || static_cast<size_t>(st.st_size) != bytes) {
    close(fd);
    return ProtocolError("shm segment " + name + " has an unexpected size");
  }
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  int err = errno;
  close(fd);
  if (p == MAP_FAILED) return SystemError("mmap shm segment " + name, err);
  auto seg = std::unique_ptr<ShmSegment>(new ShmSegment(name, p, bytes));
  seg->unlinked_ = true;  // the creator owns the name
  return seg;
}

void ShmSegment::Unlink() {
  if (!unlinked_) shm_unlink(name_.c_str());
  unlinked_ = true;
}

bool ShmSegment::Populate() {
#ifndef MADV_POPULATE_WRITE
  constexpr int MADV_POPULATE_WRITE = 23;  // (Linux 5.14; C library headers may predate it)
#endif
  return madvise(data_, size_, MADV_POPULATE_WRITE) == 0;
}

ShmSegment::~ShmSegment() {
  Unlink();
  munmap(data_, size_);
}

}  // namespace tutti
