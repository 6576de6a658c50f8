#include "core/coll/coll_registry.h"
#include "core/p2p/waiter.h"

#include <sched.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "core/base/deadline.h"

namespace tutti {

void CollRegistry::DropFinishedLocked() {
  active_.erase(std::remove_if(active_.begin(), active_.end(), [](const auto& r) { return r->done(); }),
                active_.end());
}

Status CollRegistry::BeginIssue(int rank, const CollLabel& call, size_t* in_flight) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::thread::id me = std::this_thread::get_id();
  std::string other;
  if (issuing_) {
    other = issuing_call_.Text() + ", which another thread is issuing now";
  } else if (issuer_ != me) {
    DropFinishedLocked();
    if (!active_.empty()) other = active_.front()->what() + ", which another thread issued and is still in flight";
  }
  if (!other.empty())
    return InvalidUsage("rank " + std::to_string(rank) + ": " + call.Text() + " called while " + other +
                        ": collectives on one communicator must be issued by one thread at a time, in the same "
                        "order on every rank (use Split for a communicator per thread)");
  issuing_ = true;
  issuing_call_ = call;
  issuer_ = me;
  if (in_flight != nullptr) {
    DropFinishedLocked();
    *in_flight = active_.size();
  }
  return OkStatus();
}

void CollRegistry::EndIssue(std::shared_ptr<CollRun> run) {
  std::lock_guard<std::mutex> lock(mu_);
  issuing_ = false;
  issuing_call_ = {};
  DropFinishedLocked();  // a thread that only makes blocking calls never asks for InFlight
  if (run && !run->done()) active_.push_back(std::move(run));
}

size_t CollRegistry::InFlight() {
  std::lock_guard<std::mutex> lock(mu_);
  DropFinishedLocked();
  return active_.size();
}

bool CollRegistry::AdvanceAll(CollRun* also) {
  // The runs are advanced outside the lock, from a list per thread: a fresh list on every pass of
  // a wait would allocate each time. (Appended to and cut back to where it was, should an
  // Advance ever come back here.)
  thread_local std::vector<std::shared_ptr<CollRun>> runs;
  const size_t base = runs.size();
  {
    std::lock_guard<std::mutex> lock(mu_);
    DropFinishedLocked();
    runs.insert(runs.end(), active_.begin(), active_.end());
  }
  const size_t end = runs.size();
  bool moved = false, saw = also == nullptr;
  for (size_t i = base; i < end; ++i) {
    CollRun* r = runs[i].get();  // (the list may move if it grows; the run does not)
    saw = saw || r == also;
    const uint64_t before = r->steps_done();
    const bool finished = r->Advance();
    moved = moved || finished || r->steps_done() != before;
  }
  runs.resize(base);
  if (!saw) {
    const uint64_t before = also->steps_done();
    const bool finished = also->Advance();
    moved = moved || finished || also->steps_done() != before;
  }
  return moved;
}

bool CollRegistry::Active() { return InFlight() > 0; }

Status CollWork::Wait(double timeout_s) {
  using Clock = std::chrono::steady_clock;
  if (timeout_s < 0) timeout_s = default_timeout_s_;
  const auto start = Clock::now();
  const auto deadline = start + WaitDuration(timeout_s);  // inf / NaN (TUTTI_TIMEOUT=inf): ~3 years
  P2PEngine* engine = engine_.get();
  // (A collective may wait for any rank.)
  const int spin_us = engine->SpinUs(0, engine->options().size, spin_us_);
  Waiter waiter(spin_us, yield_us_, [engine](int us) { engine->BlockUntilActivity(us); });
  P2PEngine::WaiterScope waiting(engine);
  while (true) {
    // Every collective in flight (those nobody waits on yet too), ours among them: one poll of
    // the connections per run.
    bool moved = registry_->AdvanceAll(run_.get());
    if (run_->done()) return run_->status();
    auto now = Clock::now();
    if (now >= deadline) {
      char secs[32];
      snprintf(secs, sizeof(secs), "%.3g", std::chrono::duration<double>(now - start).count());
      Status st = TimeoutError("rank " + std::to_string(rank_) + ": " + run_->what() + " timed out after " + secs +
                               " s (" + run_->Progress() + "); the communicator is unusable now");
      run_->Fail(st);
      engine->Fail(st);
      return run_->status();
    }
    waiter.Pause(moved);
  }
}

}  // namespace tutti
