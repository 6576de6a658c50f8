#include "transport/shm/doorbell.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <climits>

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
  TUTTI_ASSIGN_OR_RETURN(auto seg, ShmSegment::Open(name, kBellBytes));
  return std::unique_ptr<Doorbell>(new Doorbell(std::move(seg)));
}

void Doorbell::Ring() {
  word_->seq.fetch_add(1, std::memory_order_seq_cst);
  if (word_->sleepers.load(std::memory_order_seq_cst) != 0) Futex(&word_->seq, FUTEX_WAKE, INT_MAX, nullptr);
}

uint32_t Doorbell::Prepare() {
  word_->sleepers.fetch_add(1, std::memory_order_seq_cst);
  return word_->seq.load(std::memory_order_seq_cst);
}

void Doorbell::Wait(uint32_t seen, int timeout_us) {
  timespec ts{timeout_us / 1000000, (timeout_us % 1000000) * 1000L};
  Futex(&word_->seq, FUTEX_WAIT, seen, &ts);  // returns at once if the bell rang since Prepare
}

void Doorbell::Done() { word_->sleepers.fetch_sub(1, std::memory_order_seq_cst); }

}  // namespace tutti
