#include "transport/shm/doorbell.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <climits>

#include "core/base/wake_fence.h"

namespace tutti {

namespace {
constexpr size_t kBellBytes = 4096;

long Futex(std::atomic<uint32_t>* addr, int op, uint32_t val, const timespec* timeout) {
  // Shared (not FUTEX_PRIVATE): the word lives in memory mapped by several processes.
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(addr), op, val, timeout, nullptr, 0);
}
}  // namespace

Result<std::unique_ptr<Doorbell>> Doorbell::Create() {
  TUTTI_ASSIGN_OR_RETURN(auto seg, ShmSegment::Create(kBellBytes));
  auto bell = std::unique_ptr<Doorbell>(new Doorbell(std::move(seg)));
  bell->word_->seq.store(0);
  bell->word_->sleepers.store(0);
  return bell;
}

Result<std::unique_ptr<Doorbell>> Doorbell::Open(const std::string& name) {
  PublisherFenceIsLight();  // (registers this process, which rings the bell, now)
  TUTTI_ASSIGN_OR_RETURN(auto seg, ShmSegment::Open(name, kBellBytes));
  return std::unique_ptr<Doorbell>(new Doorbell(std::move(seg)));
}

// Ring and Prepare pair up as a store-buffer litmus: the writer published a frame, then looks at
// sleepers; the owner raises sleepers, then looks for frames (after Prepare). With the wake-up
// fences (core/base/wake_fence.h) at least one sees the other: the owner finds the frame and does
// not sleep, or the writer finds the sleeper and bumps seq, on which the owner's futex wait then
// does not block. So a writer touches the bell's line only to read it while the owner is awake:
// no read-for-ownership of a line the owner reads, per frame.
void Doorbell::Ring() {
  PublisherFence();
  if (word_->sleepers.load(std::memory_order_relaxed) == 0) return;
  word_->seq.fetch_add(1, std::memory_order_seq_cst);
  Futex(&word_->seq, FUTEX_WAKE, INT_MAX, nullptr);
}

uint32_t Doorbell::Prepare() {
  word_->sleepers.fetch_add(1, std::memory_order_seq_cst);
  SleeperFence();
  return word_->seq.load(std::memory_order_seq_cst);
}

void Doorbell::Wait(uint32_t seen, int timeout_us) {
  timespec ts{timeout_us / 1000000, (timeout_us % 1000000) * 1000L};
  Futex(&word_->seq, FUTEX_WAIT, seen, &ts);  // returns at once if the bell rang since Prepare
}

void Doorbell::Done() { word_->sleepers.fetch_sub(1, std::memory_order_seq_cst); }

}  // namespace tutti
