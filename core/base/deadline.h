// Waits as users give them: seconds as a double that may be negative, NaN or infinite. Every
// wait of the library turns its timeout into a duration here, so "forever" is one bounded value
// (1e8 s, about 3 years) and no cast of an out-of-range double is ever undefined.
#pragma once

#include <time.h>

#include <chrono>

namespace tutti {

// timeout_s as a duration; NaN, negative, infinite or above 1e8 s become 1e8 s ("never").
inline std::chrono::steady_clock::duration WaitDuration(double timeout_s) {
  if (!(timeout_s >= 0) || timeout_s > 1e8) timeout_s = 1e8;
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(timeout_s));
}

// The steady clock read cheaply, for bookkeeping on hot paths that needs milliseconds, not
// nanoseconds (when a peer was last heard from, when to check peers next): CLOCK_MONOTONIC_COARSE
// reads the kernel's last tick (a few ms old at most) without reading the time-stamp counter.
// Same origin as steady_clock (CLOCK_MONOTONIC), so the two compare; it may lag by up to a tick.
inline std::chrono::steady_clock::time_point CoarseNow() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return std::chrono::steady_clock::time_point(std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec)));
}

}  // namespace tutti
