// How a thread waits for an operation it drives itself: poll flat out for `spin_us`, then keep
// polling but yield the core to any other runnable thread (ranks oversubscribing the cores get
// to run) until `yield_us`, then sleep with a growing back-off (up to 1 ms) so that a long wait
// costs next to no CPU. Pause(true) after progress starts over.
#pragma once

#include <sched.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <functional>

namespace tutti {

class Waiter {
 public:
  // `block(us)` sleeps until there is activity or us microseconds pass (default: a plain nap).
  Waiter(int spin_us, int yield_us, std::function<void(int)> block = nullptr)
      : spin_us_(spin_us), yield_us_(std::max(spin_us, yield_us)), block_(std::move(block)) {
    Reset();
  }

  void Pause(bool moved) { Pause(moved, Clock::now()); }
  // The same with the time the caller read already (one clock read per round of its loop).
  void Pause(bool moved, std::chrono::steady_clock::time_point now) {
    if (moved) {
      Reset(now);
      return;
    }
    auto waited = std::chrono::duration_cast<std::chrono::microseconds>(now - since_).count();
    if (waited < spin_us_) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
      return;
    }
    if (waited < yield_us_) {
      sched_yield();
      return;
    }
    if (block_) {
      block_(backoff_us_);
    } else {
      timespec ts{0, backoff_us_ * 1000L};
      nanosleep(&ts, nullptr);
    }
    backoff_us_ = std::min(backoff_us_ * 2, 1000);
  }
  // (The first sleep is 1 us: it mostly just hands the core to another runnable thread.)
  // Sleeping phase reached (the caller may prefer to block on file descriptors then).
  bool sleeping() const {
    return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - since_).count() >= yield_us_;
  }

 private:
  using Clock = std::chrono::steady_clock;
  void Reset(Clock::time_point now = Clock::now()) {
    since_ = now;
    backoff_us_ = 1;
  }
  int spin_us_, yield_us_;
  std::function<void(int)> block_;
  Clock::time_point since_;
  int backoff_us_ = 1;
};

}  // namespace tutti
