// WorkCompleter: runs a function when a Work completes (Communicator::OnComplete), so a caller
// can chain work on an asynchronous call without a thread of its own waiting for it (futures,
// PyTorch's Work.get_future, progress callbacks).
//
// A function given for a Work that has already completed runs at once on the calling thread.
// The others run on the completer's thread (started at the first such call), one at a time, each
// as soon as its Work completes, whatever the order the Works were issued in: the thread polls
// every pending Work (Work::Test, which also moves it along) and, when nothing moved, pauses as
// a waiting call does (spin, yield, then block until the engine sees activity, backing off up to
// 1 ms); with nothing pending it sleeps on a condition variable and costs nothing.
//
// Every wait has a timeout: a Work still pending `timeout_s` after its function was given is
// waited for once more, briefly, and its function gets the resulting failure (a timeout, which
// for a collective makes the communicator unusable, as any timed-out wait does).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/base/status.h"
#include "core/work.h"

namespace tutti {

// Owned by a shared_ptr (as the Communicator owns it), the completer may lose its last owner
// inside one of its functions (a callback that held the communicator): its thread then keeps it
// until that pass ends, runs what is left as Stop would, and destroys it as the thread ends.
class WorkCompleter : public std::enable_shared_from_this<WorkCompleter> {
 public:
  using Callback = std::function<void(const Status&)>;
  struct Options {
    int rank = 0;            // names the rank in errors
    double timeout_s = 300;  // how long a Work may stay pending after Add; inf: ~forever
    int spin_us = 0, yield_us = 0;
    // Sleeps until there is activity or `us` microseconds pass (nullptr: a plain nap).
    std::function<void(int us)> block;
  };
  explicit WorkCompleter(Options o);
  ~WorkCompleter();  // Stop()
  WorkCompleter(const WorkCompleter&) = delete;
  WorkCompleter& operator=(const WorkCompleter&) = delete;

  // Runs fn(status of `work`) once `work` completes. kInvalidUsage for an empty Work or after
  // Stop (fn is not called then).
  Status Add(const Work& work, Callback fn);
  // Gives every pending Work a last short wait (their communicator is normally failed or
  // destroyed by now, so they complete with its error), runs the remaining functions and ends
  // the thread. Later Adds are refused. Idempotent; from a callback it only marks the stop (the
  // thread ends after that callback returns).
  void Stop();
  // Works whose function has not run yet.
  size_t pending() const;

 private:
  struct Entry {
    Work work;
    Callback fn;
    std::chrono::steady_clock::time_point deadline;
  };
  // The thread's loop; returns the completer's last reference when the thread found itself its
  // only owner (dropped as the thread ends), else null.
  std::shared_ptr<WorkCompleter> Main();
  // Runs `e`'s function with `st`, catching what it throws (a callback must not end the thread).
  void Fire(Entry& e, const Status& st);

  const Options opts_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Entry> incoming_;  // handed over by Add, under mu_
  size_t pending_count_ = 0;     // incoming_ + what the thread holds, under mu_
  bool stopping_ = false;
  std::thread thread_;           // started by the first Add that needs it, under mu_
};

}  // namespace tutti
