#include "core/p2p/cpu_board.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <chrono>
#include <functional>
#include <thread>
#include <vector>

namespace tutti {
namespace {

using Clock = std::chrono::steady_clock;

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

// The decision with a clock and a mover under the test's control: CPUs 0..3 allowed.
Clock::time_point fake_now = Clock::time_point(std::chrono::seconds(1000));
struct Decide {
  Board board;
  Clock::time_point last_move{};
  std::vector<int> moves_from;  // every move asked for
  int Spin(int cpu, int lo, int hi, bool spread = true, int spin_us = 50) {
    CpuMover mover = [this](int from, const std::function<bool(int)>& avoid) {
      moves_from.push_back(from);
      for (int c = 0; c < 4; ++c)
        if (c != from && !avoid(c)) return c;
      return -1;
    };
    return SpinUsOnCpu(board, cpu, lo, hi, spin_us, spread, [] { return fake_now; }, &last_move, mover);
  }
};

TEST(CpuBoard, SpinsWhileTheAwaitedRanksRunElsewhereAndNotesItsCpu) {
  Decide d{Board(3, 0)};
  EXPECT_EQ(d.Spin(1, 1, 2), 50);  // nobody noted a CPU yet
  EXPECT_EQ(d.board.cpu_[0], 1);
  d.board.cpu_[1] = 2;
  d.board.cpu_[2] = 1;  // on this CPU, but not awaited
  EXPECT_EQ(d.Spin(1, 1, 2), 50);
  EXPECT_EQ(d.Spin(1, 0, 3), 0);  // awaited now; the lower rank of the pair stays
  EXPECT_EQ(d.Spin(1, 0, 3, true, 0), 0);  // never spins where nobody may
  EXPECT_EQ(d.Spin(-1, 0, 3), 50);  // the CPU unknown: as ever
  EXPECT_TRUE(d.moves_from.empty());
}

TEST(CpuBoard, TheHigherRankMovesToACpuNoRankNotedAtMostEvery100Ms) {
  Decide d{Board(3, 2)};
  d.board.cpu_[0] = 0;
  d.board.cpu_[1] = 1;
  EXPECT_EQ(d.Spin(0, 0, 2), 50);  // moved from CPU 0 past CPU 1 (rank 1's) to CPU 2
  EXPECT_EQ(d.moves_from, std::vector<int>{0});
  EXPECT_EQ(d.board.cpu_[2], 2);
  // Put back beside rank 0 within 100 ms: yields; after them, moves again.
  fake_now += std::chrono::milliseconds(99);
  EXPECT_EQ(d.Spin(0, 0, 2), 0);
  EXPECT_EQ(d.moves_from.size(), 1u);
  fake_now += std::chrono::milliseconds(2);
  EXPECT_EQ(d.Spin(0, 0, 2), 50);
  EXPECT_EQ(d.moves_from.size(), 2u);
}

TEST(CpuBoard, TheHigherRankWithNowhereToGoOrNotMovingYields) {
  Decide full{Board(5, 4)};  // rank 0 on this rank's CPU, every other CPU has a rank too
  full.board.cpu_ = {0, 1, 2, 3, -1};
  EXPECT_EQ(full.Spin(0, 0, 4), 0);
  EXPECT_EQ(full.moves_from, std::vector<int>{0});  // asked, found none
  EXPECT_EQ(full.board.cpu_[4], 0);
  Decide off{Board(2, 1)};
  off.board.cpu_[0] = 0;
  EXPECT_EQ(off.Spin(0, 0, 1, /*spread=*/false), 0);
  EXPECT_TRUE(off.moves_from.empty());
}

// SpinUsBeside on a real thread: its CPU noted, and with two CPUs allowed and a rank of the
// board on the thread's CPU, the thread ends up elsewhere (moved, or the scheduler moved it
// before the look) and spins; where it went is on the board.
TEST(CpuBoard, SpinUsBesideReadsTheThreadsCpu) {
  cpu_set_t all;
  CPU_ZERO(&all);
  ASSERT_EQ(sched_getaffinity(0, sizeof(all), &all), 0);
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &all)) cpus.push_back(c);
  std::thread([&] {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpus[0], &one);
    ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
    Board b(2, 1);
    EXPECT_EQ(SpinUsBeside(b, 0, 1, 50, true), 50);
    EXPECT_EQ(b.cpu_[1], cpus[0]);
    if (cpus.size() < 2) return;
    b.cpu_[0] = cpus[0];
    CPU_SET(cpus[1], &one);
    ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
    EXPECT_EQ(SpinUsBeside(b, 0, 1, 50, true), 50);
    EXPECT_EQ(b.cpu_[1], cpus[1]);
    cpu_set_t after;
    ASSERT_EQ(sched_getaffinity(0, sizeof(after), &after), 0);
    EXPECT_TRUE(CPU_EQUAL(&after, &one));  // its allowed set is what it was
  }).join();
}

}  // namespace
}  // namespace tutti
