// Posted one-sided accesses that a CPU carries out (process_vm_readv/writev): the protocol posts
// them while it holds its lock, any thread performs them later without that lock (Run), and the
// connection reports each one's end from its Progress (TakeDone). Used by transports whose
// one-sided copies are CPU work; RDMA and CUDA IPC complete through their own queues and events.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/base/status.h"

namespace tutti {

struct Access {
  bool write = false;      // true: local -> the peer's memory; false: the peer's -> local
  std::string descriptor;  // the peer's exposed region
  size_t offset = 0;       // into the peer's region
  void* local = nullptr;
  size_t len = 0;
  uint64_t cookie = 0;
};

class AccessQueue {
 public:
  using CopyFn = std::function<Status(const Access&)>;

  void Post(Access a);
  // Performs queued accesses with `copy` until none is left. Several threads may run at once;
  // each access is performed once. Returns true if it performed any.
  bool Run(const CopyFn& copy);
  // Accesses that ended since the last call: cookie and outcome, in the order they ended.
  std::vector<std::pair<uint64_t, Status>> TakeDone();
  // Posted and not yet performed (a cheap check before Run).
  bool has_queued() const { return queued_n_.load(std::memory_order_acquire) > 0; }
  // Posted, running or not yet reported.
  bool busy() const;
  // Forgets every access that has not started and waits until none is running; nothing is
  // reported for them afterwards. After Release the queue touches no posted buffer again.
  void Release();

 private:
  mutable std::mutex mu_;
  std::condition_variable idle_;
  std::deque<Access> queued_;
  std::atomic<size_t> queued_n_{0};
  std::atomic<size_t> done_n_{0};  // lets TakeDone skip the lock when nothing ended
  int running_ = 0;
  uint64_t epoch_ = 0;  // bumped by Release: accesses of an older epoch are not reported
  std::vector<std::pair<uint64_t, Status>> done_;
};

}  // namespace tutti
