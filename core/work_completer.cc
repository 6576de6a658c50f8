#include "core/work_completer.h"

#include <cstdio>
#include <exception>

#include "core/base/deadline.h"
#include "core/base/logging.h"
#include "core/p2p/waiter.h"

namespace tutti {
namespace {

using Clock = std::chrono::steady_clock;

// A pending Work's last chance once its deadline has passed or the completer stops.
constexpr double kLastWaitS = 0.05;

}  // namespace

WorkCompleter::WorkCompleter(Options o) : opts_(std::move(o)) {}

WorkCompleter::~WorkCompleter() {
  Stop();
  // Destroyed by its own thread, as that thread ends (its last owner let go during a callback:
  // see Main): nothing touches the object after this, so the thread goes on alone to its end.
  if (thread_.joinable()) thread_.detach();
}

Status WorkCompleter::Add(const Work& work, Callback fn) {
  const std::string who = "rank " + std::to_string(opts_.rank) + ": completion callback";
  if (!fn) return InvalidArgument(who + ": no function given");
  if (!work.valid()) return InvalidUsage(who + " on an empty Work");
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return InvalidUsage(who + " after the communicator was destroyed");
  }
  Work w = work;
  if (w.Test()) {
    Entry e{std::move(w), std::move(fn), {}};
    Fire(e, e.work.status());
    return OkStatus();
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_) return InvalidUsage(who + " after the communicator was destroyed");
  incoming_.push_back({std::move(w), std::move(fn), Clock::now() + WaitDuration(opts_.timeout_s)});
  ++pending_count_;
  if (!thread_.joinable()) thread_ = std::thread([this] { std::shared_ptr<WorkCompleter> last = Main(); });
  cv_.notify_one();
  return OkStatus();
}

void WorkCompleter::Stop() {
  std::thread t;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    cv_.notify_one();
    if (!thread_.joinable() || thread_.get_id() == std::this_thread::get_id()) return;
    t = std::move(thread_);
  }
  t.join();
}

size_t WorkCompleter::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pending_count_;
}

void WorkCompleter::Fire(Entry& e, const Status& st) {
  try {
    e.fn(st);
  } catch (const std::exception& ex) {
    TUTTI_LOG(Error, Coll, "rank %d: a completion callback threw (ignored): %s", opts_.rank, ex.what());
  } catch (...) {
    TUTTI_LOG(Error, Coll, "rank %d: a completion callback threw (ignored)", opts_.rank);
  }
  e.fn = nullptr;  // what it captured goes now, not when the completer ends
}

std::shared_ptr<WorkCompleter> WorkCompleter::Main() {
  std::vector<Entry> pending;
  Waiter waiter(opts_.spin_us, opts_.yield_us, opts_.block);
  std::shared_ptr<WorkCompleter> last;  // once the thread is the completer's only owner
  for (;;) {
    bool stopping;
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (pending.empty()) cv_.wait(lock, [&] { return stopping_ || !incoming_.empty(); });
      for (Entry& e : incoming_) pending.push_back(std::move(e));
      incoming_.clear();
      stopping = stopping_;
      if (pending.empty() && stopping) return last;
    }
    // Held while the functions run: one of them may let go of the completer's last other owner
    // (null if it has no shared owner, or its owner is destroying it: then Stop ends us).
    std::shared_ptr<WorkCompleter> self = last ? last : weak_from_this().lock();
    // Functions run in the order their Works were added when several complete in one pass.
    size_t fired = 0, kept = 0;
    for (size_t i = 0; i < pending.size(); ++i) {
      Entry& e = pending[i];
      Status st;
      bool done = e.work.Test();
      if (done) {
        st = e.work.status();
      } else if (stopping || Clock::now() >= e.deadline) {
        st = e.work.Wait(kLastWaitS);  // fails the Work if it does not complete now
        if (!st.ok() && !stopping)
          st = st.WithContext("rank " + std::to_string(opts_.rank) +
                              ": no completion within the timeout after its completion callback was set");
        done = true;
      }
      if (done) {
        Fire(e, st);
        ++fired;
      } else {
        if (kept != i) pending[kept] = std::move(e);
        ++kept;
      }
    }
    pending.resize(kept);
    if (fired > 0) {
      std::lock_guard<std::mutex> lock(mu_);
      pending_count_ -= fired;
    }
    if (self && !last && self.use_count() == 1) {
      // Nobody else owns it any more, so nobody can Add or Stop: it stops as its destructor
      // would have, and is destroyed as the thread ends (its destructor then lets the thread go).
      last = self;
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    if (!pending.empty()) waiter.Pause(fired > 0);
  }
}

}  // namespace tutti
