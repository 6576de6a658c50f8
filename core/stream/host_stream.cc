#include "core/stream/host_stream.h"

#include <chrono>

#include "core/base/deadline.h"

namespace tutti {

// How far a stream has got: shared with its events, which may outlive it.
struct HostEvent::Progress {
  std::mutex mu;
  std::condition_variable cv;
  uint64_t done = 0;  // every item with seq <= done has run or was skipped
};

bool HostEvent::Query() const {
  if (!progress_) return true;
  std::lock_guard<std::mutex> lock(progress_->mu);
  return progress_->done >= seq_;
}

Status HostEvent::Wait(double timeout_s) const {
  if (!progress_) return OkStatus();
  std::unique_lock<std::mutex> lock(progress_->mu);
  if (!progress_->cv.wait_for(lock, WaitDuration(timeout_s), [&] { return progress_->done >= seq_; }))
    return TimeoutError("event not reached after " + std::to_string(timeout_s) + " s");
  return OkStatus();
}

HostStream::HostStream(std::string name)
    : name_(std::move(name)), progress_(std::make_shared<HostEvent::Progress>()), thread_([this] { Run(); }) {}

HostStream::~HostStream() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void HostStream::Enqueue(std::string what, std::function<Status()> fn) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back({++enqueued_, std::move(what), std::move(fn)});
  }
  cv_.notify_all();
}

HostEvent HostStream::Record() {
  std::lock_guard<std::mutex> lock(mu_);
  return HostEvent(progress_, enqueued_);
}

void HostStream::WaitEvent(const HostEvent& e, double timeout_s) {
  if (e.Query()) return;
  Enqueue("wait for an event", [e, timeout_s] { return e.Wait(timeout_s); });
}

Status HostStream::Synchronize(double timeout_s) {
  uint64_t target;
  {
    std::lock_guard<std::mutex> lock(mu_);
    target = enqueued_;
  }
  Status st = HostEvent(progress_, target).Wait(timeout_s);
  if (!st.ok()) return TimeoutError(name_ + ": synchronize: queued work not done after " + std::to_string(timeout_s) + " s");
  std::lock_guard<std::mutex> lock(mu_);
  Status first = first_error_;
  first_error_ = OkStatus();
  return first;
}

bool HostStream::Idle() const {
  uint64_t target;
  {
    std::lock_guard<std::mutex> lock(mu_);
    target = enqueued_;
  }
  return HostEvent(progress_, target).Query();
}

void HostStream::Run() {
  while (true) {
    Item item;
    bool skip;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stop_ and drained
      item = std::move(queue_.front());
      queue_.pop_front();
      skip = !first_error_.ok();
    }
    Status st;
    if (skip) {
      st = OkStatus();  // the first error is what Synchronize reports
    } else {
      try {
        st = item.fn();
      } catch (const std::exception& e) {  // work is ours, but never let it end the thread
        st = InternalError(std::string("exception: ") + e.what());
      }
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!st.ok() && first_error_.ok())
        first_error_ = st.WithContext(name_ + ": " + item.what + " (later work on the stream was skipped)");
    }
    item.fn = nullptr;  // release captures before reporting completion
    {
      std::lock_guard<std::mutex> lock(progress_->mu);
      progress_->done = item.seq;
    }
    progress_->cv.notify_all();
  }
}

}  // namespace tutti
