// Waits as users give them: seconds as a double that may be negative, NaN or infinite. Every
// wait of the library turns its timeout into a duration here, so "forever" is one bounded value
// (1e8 s, about 3 years) and no cast of an out-of-range double is ever undefined.
#pragma once

#include <chrono>

namespace tutti {

// timeout_s as a duration; NaN, negative, infinite or above 1e8 s become 1e8 s ("never").
inline std::chrono::steady_clock::duration WaitDuration(double timeout_s) {
  if (!(timeout_s >= 0) || timeout_s > 1e8) timeout_s = 1e8;
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(timeout_s));
}

}  // namespace tutti
