#include "core/stream/host_stream.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace tutti {
namespace {

TEST(HostStream, EnqueueReturnsAtOnceAndWorkRunsInOrder) {
  HostStream s("s");
  std::atomic<bool> release{false};
  std::vector<int> order;
  s.Enqueue("blocker", [&] {
    while (!release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return OkStatus();
  });
  for (int i = 0; i < 100; ++i)
    s.Enqueue("item " + std::to_string(i), [&order, i] {
      order.push_back(i);
      return OkStatus();
    });
  EXPECT_FALSE(s.Idle());  // the blocker holds everything behind it
  HostEvent e = s.Record();
  EXPECT_FALSE(e.Query());
  EXPECT_EQ(e.Wait(0.05).code(), Code::kTimeout);
  release = true;
  ASSERT_TRUE(s.Synchronize().ok());
  EXPECT_TRUE(e.Query());
  EXPECT_TRUE(s.Idle());
  ASSERT_EQ(order.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(order[i], i);
}

TEST(HostStream, FirstErrorIsReportedOnceAndLaterWorkIsSkipped) {
  HostStream s("my stream");
  bool ran_after = false;
  s.Enqueue("ok", [] { return OkStatus(); });
  s.Enqueue("the bad one", [] { return InvalidArgument("bad root"); });
  s.Enqueue("after", [&] {
    ran_after = true;
    return OkStatus();
  });
  Status st = s.Synchronize();
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_NE(st.message().find("my stream: the bad one"), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find("bad root"), std::string::npos) << st.ToString();
  EXPECT_FALSE(ran_after);
  // Reported once; the stream works again.
  EXPECT_TRUE(s.Synchronize().ok());
  s.Enqueue("later", [&] {
    ran_after = true;
    return OkStatus();
  });
  EXPECT_TRUE(s.Synchronize().ok());
  EXPECT_TRUE(ran_after);
}

TEST(HostStream, StreamsProgressIndependentlyAndEventsOrderThem) {
  HostStream a("a"), b("b");
  std::atomic<int> stage{0};
  // a waits for something b does later: only independent progress lets both finish.
  a.Enqueue("wait for b", [&] {
    for (int i = 0; i < 10000 && stage.load() < 1; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return stage.load() >= 1 ? OkStatus() : TimeoutError("b never ran");
  });
  b.Enqueue("step", [&] {
    stage = 1;
    return OkStatus();
  });
  // c: b's later work waits for a's event.
  HostEvent after_a = a.Record();
  b.WaitEvent(after_a);
  int seen = -1;
  b.Enqueue("after a", [&] {
    seen = after_a.Query() ? 1 : 0;
    return OkStatus();
  });
  ASSERT_TRUE(a.Synchronize().ok());
  ASSERT_TRUE(b.Synchronize().ok());
  EXPECT_EQ(seen, 1);
}

TEST(HostStream, WaitingForAnEventTimesOut) {
  HostStream a("a"), b("b");
  std::atomic<bool> release{false};
  a.Enqueue("long", [&] {
    while (!release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return OkStatus();
  });
  b.WaitEvent(a.Record(), 0.05);
  Status st = b.Synchronize();
  EXPECT_EQ(st.code(), Code::kTimeout) << st.ToString();
  EXPECT_EQ(a.Synchronize(0.05).code(), Code::kTimeout);  // still running: synchronize gives up
  release = true;
  EXPECT_TRUE(a.Synchronize().ok());
}

TEST(HostStream, DestructorRunsWhatIsQueuedAndEventsOutliveTheStream) {
  std::atomic<int> n{0};
  HostEvent e;
  {
    HostStream s;
    for (int i = 0; i < 10; ++i) s.Enqueue("inc", [&] {
      ++n;
      return OkStatus();
    });
    e = s.Record();
  }
  EXPECT_EQ(n.load(), 10);
  EXPECT_TRUE(e.Query());
  EXPECT_TRUE(HostEvent().Query());
}

}  // namespace
}  // namespace tutti
