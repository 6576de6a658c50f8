// The handshake the fences serve, as a store-buffering litmus run many times: the publisher
// stores x then loads y (PublisherFence between), the sleeper stores y then loads x
// (SleeperFence between); in no round may both loads miss the other side's store. (Without the
// fences, x86 shows such rounds: each store waits in its CPU's store buffer while the load runs.
// The two sides meet at a spinning barrier before each round so that they run at once.)
#include "core/base/wake_fence.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace tutti {
namespace {

TEST(WakeFence, NoRoundMissesBothStores) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "the two sides need a CPU each";
  std::printf("publisher fence: %s\n", PublisherFenceIsLight() ? "compiler barrier (membarrier)" : "full fence");
  constexpr int kRounds = 20000;
  std::atomic<int> x{0}, y{0}, arrived{0};
  std::vector<int> seen_y(kRounds + 1), seen_x(kRounds + 1);
  auto side = [&](bool publisher) {
    for (int i = 1; i <= kRounds; ++i) {
      arrived.fetch_add(1, std::memory_order_acq_rel);
      for (int spins = 0; arrived.load(std::memory_order_acquire) < 2 * i; ++spins)
        if (spins > 100000) std::this_thread::yield();  // (the other side lost its CPU)
      if (publisher) {
        x.store(i, std::memory_order_relaxed);
        PublisherFence();
        seen_y[i] = y.load(std::memory_order_relaxed);
      } else {
        y.store(i, std::memory_order_relaxed);
        SleeperFence();
        seen_x[i] = x.load(std::memory_order_relaxed);
      }
    }
  };
  std::thread p(side, true), s(side, false);
  p.join();
  s.join();
  int missed = 0;
  for (int i = 1; i <= kRounds; ++i) missed += seen_y[i] < i && seen_x[i] < i;
  EXPECT_EQ(missed, 0) << "rounds in which neither side saw the other's store";
}

}  // namespace
}  // namespace tutti
