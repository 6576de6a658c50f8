#include "core/base/deadline.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <thread>

namespace tutti {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

TEST(WaitDuration, OddTimeoutsBecomeNever) {
  const auto never = WaitDuration(1e8);
  EXPECT_EQ(WaitDuration(-1), never);
  EXPECT_EQ(WaitDuration(NAN), never);
  EXPECT_EQ(WaitDuration(INFINITY), never);
  EXPECT_EQ(WaitDuration(1e300), never);
  EXPECT_EQ(std::chrono::duration_cast<milliseconds>(WaitDuration(1.5)).count(), 1500);
  EXPECT_EQ(WaitDuration(0).count(), 0);
}

TEST(CoarseNow, ComparesWithTheSteadyClockAndLagsByATickAtMost) {
  for (int i = 0; i < 50; ++i) {
    const auto before = steady_clock::now();
    const auto coarse = CoarseNow();
    const auto after = steady_clock::now();
    EXPECT_LE(coarse, after);
    EXPECT_GT(coarse, before - milliseconds(50));  // a tick is 1-10 ms; 50 leaves room for a busy machine
    std::this_thread::sleep_for(std::chrono::microseconds(300));
  }
}

TEST(CoarseNow, MovesForward) {
  const auto a = CoarseNow();
  std::this_thread::sleep_for(milliseconds(30));
  const auto b = CoarseNow();
  EXPECT_GE(b - a, milliseconds(15));
}

}  // namespace
}  // namespace tutti
