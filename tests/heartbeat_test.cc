// A rank that stops (SIGSTOP: alive, connected, silent) is declared dead by its peers through
// heartbeats, naming it, even while they are idle and long before the operation timeout; a rank
// that merely computes for a while (its progress thread still beats) is not. Real processes,
// over shm and tcp.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "core/communicator.h"
#include "tests/harness/proc_ranks.h"

namespace tutti::testing {
namespace {

double Since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Rank 1 stops itself; rank 0 stays idle past the heartbeat timeout, then finds the
// communicator failed naming rank 1, and kills it. Exit codes: 0 as expected; 10+ otherwise.
int StoppedRank(int rank) {
  auto comm = Communicator::InitFromEnv();
  if (!comm.ok()) return 10;
  Communicator& c = **comm;
  int pid = getpid();
  Status st = rank == 1 ? c.Send(&pid, sizeof(pid), 0) : c.Recv(&pid, sizeof(pid), 1);
  if (!st.ok()) return 11;
  if (rank == 1) {
    raise(SIGSTOP);
    return 12;  // not reached: rank 0 kills us
  }
  sleep(4);  // idle: no call in progress, the progress thread alone must notice
  auto t0 = std::chrono::steady_clock::now();
  int x = 0;
  st = c.Recv(&x, sizeof(x), 1, 5, 60);
  double took = Since(t0);
  kill(pid, SIGKILL);
  fprintf(stderr, "rank 0 after %.2f s: %s\n", took, st.ToString().c_str());
  if (st.ok()) return 13;
  if (st.message().find("nothing heard from rank 1") == std::string::npos) return 14;
  return took < 30 ? 0 : 15;  // the Recv's own timeout is 60 s
}

// Rank 1 computes (no calls) for 3 heartbeat timeouts, then both exchange a message.
int BusyRank(int rank) {
  auto comm = Communicator::InitFromEnv();
  if (!comm.ok()) return 10;
  Communicator& c = **comm;
  if (rank == 1) {
    auto t0 = std::chrono::steady_clock::now();
    volatile double sink = 0;
    while (Since(t0) < 3) sink = sink + 1;
  }
  int x = 5;
  Status st = rank == 1 ? c.Send(&x, sizeof(x), 0) : c.Recv(&x, sizeof(x), 1, 0, 60);
  if (!st.ok()) fprintf(stderr, "rank %d: %s\n", rank, st.ToString().c_str());
  return st.ok() && x == 5 ? 0 : 16;
}

class Heartbeat : public ::testing::TestWithParam<std::string> {};

TEST_P(Heartbeat, StoppedRankIsDeclaredDeadWhileIdle) {
  auto ends = RunProcRanks(2, StoppedRank,
                           {{"TUTTI_TRANSPORT", GetParam()}, {"TUTTI_HEARTBEAT_TIMEOUT", "1"}}, 120);
  EXPECT_TRUE(ends[0].exited);
  EXPECT_EQ(ends[0].code, 0) << "11: setup, 13: no error, 14: wrong error, 15: too late";
  EXPECT_EQ(ends[1].signal, SIGKILL);
}

TEST_P(Heartbeat, BusyRankIsNotDeclaredDead) {
  auto ends = RunProcRanks(2, BusyRank, {{"TUTTI_TRANSPORT", GetParam()}, {"TUTTI_HEARTBEAT_TIMEOUT", "1"}}, 120);
  for (int r = 0; r < 2; ++r) {
    EXPECT_TRUE(ends[r].exited) << "rank " << r;
    EXPECT_EQ(ends[r].code, 0) << "rank " << r;
  }
}

INSTANTIATE_TEST_SUITE_P(Transports, Heartbeat, ::testing::Values("shm", "tcp"));

}  // namespace
}  // namespace tutti::testing
