#include "transport/access_queue.h"

namespace tutti {

void AccessQueue::Post(Access a) {
  std::lock_guard<std::mutex> lock(mu_);
  queued_.push_back(std::move(a));
  queued_n_.store(queued_.size(), std::memory_order_release);
}

bool AccessQueue::Run(const CopyFn& copy) {
  bool ran = false;
  std::unique_lock<std::mutex> lock(mu_);
  while (!queued_.empty()) {
    Access a = std::move(queued_.front());
    queued_.pop_front();
    queued_n_.store(queued_.size(), std::memory_order_release);
    const uint64_t epoch = epoch_;
    ++running_;
    lock.unlock();
    Status st = copy(a);
    lock.lock();
    --running_;
    if (epoch == epoch_) {
      done_.emplace_back(a.cookie, std::move(st));
      done_n_.store(done_.size(), std::memory_order_release);
    }
    if (running_ == 0) idle_.notify_all();
    ran = true;
  }
  return ran;
}

std::vector<std::pair<uint64_t, Status>> AccessQueue::TakeDone() {
  if (done_n_.load(std::memory_order_acquire) == 0) return {};
  std::lock_guard<std::mutex> lock(mu_);
  done_n_.store(0, std::memory_order_release);
  return std::exchange(done_, {});
}

bool AccessQueue::busy() const {
  std::lock_guard<std::mutex> lock(mu_);
  return !queued_.empty() || running_ > 0 || !done_.empty();
}

void AccessQueue::Release() {
  std::unique_lock<std::mutex> lock(mu_);
  queued_.clear();
  queued_n_.store(0, std::memory_order_release);
  done_.clear();
  done_n_.store(0, std::memory_order_release);
  ++epoch_;
  // A copy is a bounded system call on memory that exists: waiting for it cannot hang.
  idle_.wait(lock, [&] { return running_ == 0; });
}

}  // namespace tutti
