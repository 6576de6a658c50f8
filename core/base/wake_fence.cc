#include "core/base/wake_fence.h"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>

namespace tutti {

namespace {

long Membarrier(int cmd) { return syscall(SYS_membarrier, cmd, 0, 0); }

bool GlobalExpeditedAvailable() {
  static const bool available = [] {
    const long mask = Membarrier(MEMBARRIER_CMD_QUERY);
    return mask > 0 && (mask & MEMBARRIER_CMD_GLOBAL_EXPEDITED) != 0 &&
           (mask & MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) != 0;
  }();
  return available;
}

// From registration on, the sleepers' barriers reach this process's threads.
bool Registered() {
  static const bool registered =
      GlobalExpeditedAvailable() && Membarrier(MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) == 0;
  return registered;
}

}  // namespace

void PublisherFence() {
  if (Registered()) {
    std::atomic_signal_fence(std::memory_order_seq_cst);
  } else {
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
}

void SleeperFence() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (GlobalExpeditedAvailable()) Membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED);
}

bool PublisherFenceIsLight() { return Registered(); }

}  // namespace tutti
