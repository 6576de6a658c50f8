#include "core/base/cpu_move.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <thread>

namespace tutti {
namespace {

cpu_set_t Allowed() {
  cpu_set_t s;
  CPU_ZERO(&s);
  EXPECT_EQ(sched_getaffinity(0, sizeof(s), &s), 0);
  return s;
}

TEST(CpuMove, MovesToAnotherAllowedCpuAndKeepsTheAllowedSet) {
  const cpu_set_t before = Allowed();
  if (CPU_COUNT(&before) < 2) GTEST_SKIP() << "one CPU allowed";
  EXPECT_EQ(AllowedCpus(), CPU_COUNT(&before));
  // The thread runs on the CPU it was moved to when the call returns; the scheduler may move it
  // again at once (rarely), so a few tries must see it there at least once.
  bool seen_there = false;
  for (int attempt = 0; attempt < 5 && !seen_there; ++attempt) {
    const int from = sched_getcpu();
    ASSERT_GE(from, 0);
    const int to = MoveOffCpu(from, [](int) { return false; });
    seen_there = sched_getcpu() == to;
    ASSERT_GE(to, 0);
    EXPECT_NE(to, from);
    EXPECT_TRUE(CPU_ISSET(to, &before));
    const cpu_set_t after = Allowed();
    EXPECT_TRUE(CPU_EQUAL(&before, &after));
  }
  EXPECT_TRUE(seen_there);
}

TEST(CpuMove, SkipsAvoidedCpus) {
  const cpu_set_t before = Allowed();
  if (CPU_COUNT(&before) < 3) {
    // Every other CPU avoided: nowhere to go, and nothing changes.
    const int from = sched_getcpu();
    EXPECT_EQ(MoveOffCpu(from, [](int) { return true; }), -1);
    const cpu_set_t after = Allowed();
    EXPECT_TRUE(CPU_EQUAL(&before, &after));
    return;
  }
  int first_other = -1;
  const int from = sched_getcpu();
  for (int c = 0; c < CPU_SETSIZE && first_other < 0; ++c)
    if (c != from && CPU_ISSET(c, &before)) first_other = c;
  const int to = MoveOffCpu(from, [&](int c) { return c == first_other; });
  ASSERT_GE(to, 0);  // (what the call chose: where the thread runs now is the scheduler's)
  EXPECT_NE(to, first_other);
  EXPECT_NE(to, from);
}

TEST(CpuMove, OneAllowedCpuStaysPut) {
  const cpu_set_t all = Allowed();
  int only = -1;
  for (int c = 0; c < CPU_SETSIZE && only < 0; ++c)
    if (CPU_ISSET(c, &all)) only = c;
  ASSERT_GE(only, 0);
  std::thread t([&] {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(only, &one);
    ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
    EXPECT_EQ(AllowedCpus(), 1);
    EXPECT_EQ(MoveOffCpu(sched_getcpu(), [](int) { return false; }), -1);
    EXPECT_EQ(sched_getcpu(), only);
    cpu_set_t after;
    ASSERT_EQ(sched_getaffinity(0, sizeof(after), &after), 0);
    EXPECT_TRUE(CPU_EQUAL(&one, &after));
  });
  t.join();
}

}  // namespace
}  // namespace tutti
