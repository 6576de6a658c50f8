// A rank killed with SIGKILL in the middle of a transfer: every surviving rank fails with an
// error naming it, well within the timeout, over shm and over tcp; also the root of a direct slot
// call, which waits for its reader. Real processes.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <vector>

#include "core/communicator.h"
#include "tests/harness/proc_ranks.h"

namespace tutti::testing {
namespace {

constexpr int kVictim = 2;

// Survivors' exit codes: 0 = failed as expected naming the victim; 10+ = something else.
int RankBody(int rank) {
  auto comm = Communicator::InitFromEnv();
  if (!comm.ok()) {
    fprintf(stderr, "rank %d init: %s\n", rank, comm.status().ToString().c_str());
    return 10;
  }
  Communicator& c = **comm;
  std::vector<char> big(64 << 20, 1);
  if (rank == kVictim) {
    // A few messages go through (rank 1 says it has them: small sends complete once buffered),
    // then a large one starts and the process dies.
    for (int i = 0; i < 3; ++i)
      if (!c.Send(big.data(), 1000, 1, 0).ok()) return 11;
    if (!c.Recv(big.data(), 1, 1, 2).ok()) return 11;
    auto w = c.ISend(big.data(), big.size(), 1, 1);
    usleep(20000);
    raise(SIGKILL);
  }
  Status st;
  if (rank == 1) {
    for (int i = 0; i < 3 && st.ok(); ++i) st = c.Recv(big.data(), 1000, kVictim, 0);
    if (st.ok()) st = c.Send(big.data(), 1, kVictim, 2);
    if (!st.ok()) return 12;
    // The large one may or may not arrive; the next one never will.
    st = c.Recv(big.data(), big.size(), kVictim, 1);
    if (st.ok()) st = c.Recv(big.data(), 8, kVictim, 1);
  } else {
    // Waits on a live rank that never sends: only the failure of rank 2 can end this.
    st = c.Recv(big.data(), 8, (rank + 1) % 4 == kVictim ? 0 : (rank + 1) % 4, 7);
  }
  fprintf(stderr, "rank %d: %s\n", rank, st.ToString().c_str());
  if (st.ok()) return 13;
  if (st.message().find("rank 2") == std::string::npos) return 14;
  return 0;
}

class DeadRank : public ::testing::TestWithParam<std::string> {};

TEST_P(DeadRank, EverySurvivorNamesTheDeadRank) {
  auto ends = RunProcRanks(4, RankBody, {{"TUTTI_TRANSPORT", GetParam()}, {"TUTTI_TIMEOUT", "60"}}, 90);
  for (int r = 0; r < 4; ++r) {
    if (r == kVictim) {
      EXPECT_EQ(ends[r].signal, SIGKILL);
      continue;
    }
    EXPECT_TRUE(ends[r].exited) << "rank " << r << " was killed (signal " << ends[r].signal << ")";
    EXPECT_EQ(ends[r].code, 0) << "rank " << r;
    // Far less than the 60 s timeout: the failure is detected, not waited out.
    EXPECT_LT(ends[r].seconds, 20) << "rank " << r;
  }
}

INSTANTIATE_TEST_SUITE_P(Transports, DeadRank, ::testing::Values("shm", "tcp"),
                         [](const auto& info) { return info.param; });

// A scatter large enough to be a direct slot call: its root waits until its reader copied its
// block out of the root's buffer (without direct calls it would return at once). The reader dies
// instead: the root fails, naming it, instead of waiting out the timeout.
int DirectRootBody(int rank) {
  auto comm = Communicator::InitFromEnv();
  if (!comm.ok()) return 10;
  Communicator& c = **comm;
  if (rank == 1) {
    usleep(200000);
    raise(SIGKILL);
  }
  std::vector<int32_t> all(2 << 16, 7), mine(1 << 16);  // blocks of 256 KiB
  Status st = c.Scatter(all.data(), mine.data(), mine.size(), DataType::kInt32, 0);
  fprintf(stderr, "rank 0: %s\n", st.ToString().c_str());
  if (st.ok()) return 13;
  if (st.message().find("rank 1") == std::string::npos || st.message().find("direct slots") == std::string::npos)
    return 14;
  return c.stats().direct_slot_calls == 1 ? 0 : 15;
}

TEST(DeadRankDirect, ADirectCallsRootFailsWhenItsReaderDies) {
  auto ends = RunProcRanks(2, DirectRootBody, {{"TUTTI_TRANSPORT", "shm"}, {"TUTTI_TIMEOUT", "60"}}, 90);
  EXPECT_EQ(ends[1].signal, SIGKILL);
  EXPECT_TRUE(ends[0].exited) << "rank 0 was killed (signal " << ends[0].signal << ")";
  EXPECT_EQ(ends[0].code, 0);
  EXPECT_LT(ends[0].seconds, 20);
}

}  // namespace
}  // namespace tutti::testing
