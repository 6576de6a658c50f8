#include "core/p2p/cpu_board.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <functional>
#include <thread>
#include <vector>

namespace tutti {
namespace {

// A board in memory: every rank's last note (-1: none).
class Board : public CpuBoard {
 public:
  Board(int n, int me) : cpu_(n, -1), me_(me) {}
  int rank() const override { return me_; }
  int nranks() const override { return static_cast<int>(cpu_.size()); }
  void NoteCpu(int cpu) override { cpu_[me_] = cpu; }
  int RankOnCpu(int lo, int hi, int cpu) const override {
    for (int p = lo; p < hi; ++p)
      if (p != me_ && cpu_[p] == cpu) return p;
    return -1;
  }
  std::vector<int> cpu_;
  int me_;
};

// Pins the calling thread to `cpus`, running on the first when this returns.
bool PinTo(const std::vector<int>& cpus) {
  cpu_set_t s;
  CPU_ZERO(&s);
  CPU_SET(cpus[0], &s);
  if (sched_setaffinity(0, sizeof(s), &s) != 0) return false;
  for (int c : cpus) CPU_SET(c, &s);
  return sched_setaffinity(0, sizeof(s), &s) == 0;
}

std::vector<int> AllowedCpus() {
  cpu_set_t s;
  CPU_ZERO(&s);
  std::vector<int> out;
  if (sched_getaffinity(0, sizeof(s), &s) != 0) return out;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &s)) out.push_back(c);
  return out;
}

// Each case on a fresh thread: the rate limit of moves is per thread.
void OnThread(const std::function<void()>& f) { std::thread(f).join(); }

TEST(CpuBoard, SpinsWhileTheAwaitedRanksRunElsewhereAndNotesItsCpu) {
  const std::vector<int> cpus = AllowedCpus();
  ASSERT_FALSE(cpus.empty());
  OnThread([&] {
    ASSERT_TRUE(PinTo({cpus[0]}));
    Board b(3, 0);
    EXPECT_EQ(SpinUsBeside(b, 1, 2, 50, true), 50);  // nobody noted a CPU yet
    EXPECT_EQ(b.cpu_[0], cpus[0]);
    b.cpu_[1] = cpus[0] + 1;
    b.cpu_[2] = cpus[0];  // on this CPU, but not awaited
    EXPECT_EQ(SpinUsBeside(b, 1, 2, 50, true), 50);
    EXPECT_EQ(SpinUsBeside(b, 0, 3, 50, true), 0);  // awaited now (the lower rank: stays)
    EXPECT_EQ(sched_getcpu(), cpus[0]);
    EXPECT_EQ(SpinUsBeside(b, 0, 3, 0, true), 0);  // never spins where nobody may
  });
}

TEST(CpuBoard, TheLowerRankOfAPairYieldsAndStays) {
  const std::vector<int> cpus = AllowedCpus();
  OnThread([&] {
    ASSERT_TRUE(PinTo(cpus));
    Board b(2, 0);
    const int cpu = sched_getcpu();
    b.cpu_[1] = cpu;
    EXPECT_EQ(SpinUsBeside(b, 1, 2, 50, true), 0);
    EXPECT_EQ(b.cpu_[0], cpu);
  });
}

TEST(CpuBoard, TheHigherRankWithNowhereToGoYields) {
  const std::vector<int> cpus = AllowedCpus();
  OnThread([&] {  // one CPU allowed
    ASSERT_TRUE(PinTo({cpus[0]}));
    Board b(2, 1);
    b.cpu_[0] = cpus[0];
    EXPECT_EQ(SpinUsBeside(b, 0, 1, 50, true), 0);
    EXPECT_EQ(sched_getcpu(), cpus[0]);
  });
  OnThread([&] {  // moving turned off
    ASSERT_TRUE(PinTo(cpus));
    Board b(2, 1);
    b.cpu_[0] = sched_getcpu();
    EXPECT_EQ(SpinUsBeside(b, 0, 1, 50, false), 0);
  });
  if (cpus.size() < 2) GTEST_SKIP() << "one CPU allowed";
  OnThread([&] {  // every other CPU has a rank
    ASSERT_TRUE(PinTo({cpus[0], cpus[1]}));
    Board b(3, 2);
    b.cpu_[0] = cpus[0];
    b.cpu_[1] = cpus[1];
    EXPECT_EQ(SpinUsBeside(b, 0, 2, 50, true), 0);
    EXPECT_EQ(sched_getcpu(), cpus[0]);
  });
}

TEST(CpuBoard, TheHigherRankMovesToAFreeCpuAtMostEvery100Ms) {
  const std::vector<int> cpus = AllowedCpus();
  if (cpus.size() < 2) GTEST_SKIP() << "one CPU allowed";
  OnThread([&] {
    ASSERT_TRUE(PinTo({cpus[0], cpus[1]}));
    Board b(2, 1);
    b.cpu_[0] = cpus[0];
    EXPECT_EQ(SpinUsBeside(b, 0, 1, 50, true), 50);
    EXPECT_EQ(b.cpu_[1], cpus[1]);
    EXPECT_EQ(sched_getcpu(), cpus[1]);
    cpu_set_t s;
    ASSERT_EQ(sched_getaffinity(0, sizeof(s), &s), 0);
    EXPECT_EQ(CPU_COUNT(&s), 2);  // allowed both again
    // Put back beside rank 0 at once: yields rather than moving again.
    ASSERT_TRUE(PinTo({cpus[0], cpus[1]}));
    EXPECT_EQ(SpinUsBeside(b, 0, 1, 50, true), 0);
    EXPECT_EQ(sched_getcpu(), cpus[0]);
  });
}

}  // namespace
}  // namespace tutti
