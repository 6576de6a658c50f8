#include "transport/access_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <set>
#include <thread>

namespace tutti {
namespace {

Access Make(uint64_t cookie, void* local = nullptr) {
  Access a;
  a.cookie = cookie;
  a.local = local;
  a.len = 1;
  return a;
}

TEST(AccessQueue, EveryAccessRunsOnceAndIsReportedOnceAcrossThreads) {
  AccessQueue q;
  std::atomic<int> copies{0};
  for (uint64_t c = 1; c <= 500; ++c) q.Post(Make(c));
  EXPECT_TRUE(q.has_queued());
  auto run = [&] {
    q.Run([&](const Access& a) {
      copies.fetch_add(1);
      return a.cookie % 7 == 0 ? UnavailableError("odd one") : OkStatus();
    });
  };
  std::thread t1(run), t2(run);
  t1.join();
  t2.join();
  EXPECT_EQ(copies.load(), 500);
  EXPECT_FALSE(q.has_queued());
  std::set<uint64_t> seen;
  for (auto& [cookie, st] : q.TakeDone()) {
    EXPECT_TRUE(seen.insert(cookie).second) << cookie << " reported twice";
    EXPECT_EQ(st.ok(), cookie % 7 != 0) << cookie;
  }
  EXPECT_EQ(seen.size(), 500u);
  EXPECT_TRUE(q.TakeDone().empty());
  EXPECT_FALSE(q.busy());
}

TEST(AccessQueue, ReleaseWaitsForTheRunningCopyAndForgetsTheRest) {
  AccessQueue q;
  for (uint64_t c = 1; c <= 3; ++c) q.Post(Make(c));
  std::atomic<bool> started{false}, finished{false};
  std::atomic<int> copies{0};
  std::thread runner([&] {
    q.Run([&](const Access&) {
      copies.fetch_add(1);
      started.store(true);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      finished.store(true);
      return OkStatus();
    });
  });
  while (!started.load()) std::this_thread::yield();
  q.Release();  // must not return while the copy writes into a buffer its owner may now free
  EXPECT_TRUE(finished.load());
  runner.join();
  EXPECT_EQ(copies.load(), 1);  // the two queued behind it were forgotten
  EXPECT_TRUE(q.TakeDone().empty());
  EXPECT_FALSE(q.busy());
  // The queue stays usable.
  q.Post(Make(9));
  q.Run([](const Access&) { return OkStatus(); });
  auto done = q.TakeDone();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].first, 9u);
}

}  // namespace
}  // namespace tutti
