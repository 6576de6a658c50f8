// A host stream: an ordered queue of work with its own thread, with the semantics of a CUDA
// stream, so stream-ordered calls (NCCL's model) work and are tested on machines without a GPU.
//
// Enqueue returns at once; the work runs after everything enqueued before it on the same stream,
// and what is enqueued later runs after it. Streams progress independently of each other and
// of the caller. Record() marks the current end of a stream as an event; another stream's
// WaitEvent(e) holds that stream's later work until the event's work is done (cudaStreamWaitEvent).
//
// Errors: work returns a Status. After a failure the stream skips the rest of what was queued
// before the next Synchronize (it may depend on the failed result; each skipped item is named),
// and Synchronize returns the first error, naming the work, then the stream is usable again.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "core/base/status.h"

namespace tutti {

class HostStream;

// A point in a stream's order. Default-constructed: already complete.
class HostEvent {
 public:
  HostEvent() = default;
  bool Query() const;  // true once everything up to the point has run (or been skipped)
  // Waits until Query() is true; kTimeout after timeout_s.
  Status Wait(double timeout_s) const;

 private:
  friend class HostStream;
  struct Progress;
  HostEvent(std::shared_ptr<Progress> p, uint64_t seq) : progress_(std::move(p)), seq_(seq) {}
  std::shared_ptr<Progress> progress_;
  uint64_t seq_ = 0;
};

class HostStream {
 public:
  explicit HostStream(std::string name = "host stream");
  // Runs what is queued (each item is bounded by its own timeouts), then stops the thread.
  ~HostStream();
  HostStream(const HostStream&) = delete;
  HostStream& operator=(const HostStream&) = delete;

  // Queues `fn`; `what` names it in errors ("all_reduce on comm 3", ...).
  void Enqueue(std::string what, std::function<Status()> fn);
  // Marks the current end of the stream.
  HostEvent Record();
  // Later work on this stream waits (up to timeout_s, then fails) until `e` completed.
  void WaitEvent(const HostEvent& e, double timeout_s = 300);
  // Waits until everything queued so far has run; returns the first error since the last
  // Synchronize (kTimeout if the work is not done after timeout_s; the stream keeps going).
  Status Synchronize(double timeout_s = 300);
  // True if nothing is queued or running.
  bool Idle() const;
  const std::string& name() const { return name_; }

 private:
  struct Item {
    uint64_t seq;
    std::string what;
    std::function<Status()> fn;
  };
  void Run();

  const std::string name_;
  std::shared_ptr<HostEvent::Progress> progress_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Item> queue_;
  uint64_t enqueued_ = 0;
  Status first_error_;  // since the last Synchronize
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace tutti
