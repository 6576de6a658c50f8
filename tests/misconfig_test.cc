// Misconfigured launches fail fast (seconds, far inside the store timeout) with an error that
// names the problem, on every rank: world sizes that differ, two processes claiming one rank, a
// second init joining a store on which a communicator was already formed. Real processes.
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>

#include "core/communicator.h"
#include "core/base/process.h"
#include "core/store/tcp_store.h"
#include "tests/harness/proc_ranks.h"

namespace tutti::testing {
namespace {

// Far longer than any check below may take: failing by the timeout would be the bug.
constexpr const char* kStoreTimeout = "120";
constexpr double kFast = 30;  // loose: a loaded 2-core machine

double Since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Exit codes: 0 = init failed fast with `want` in the message; 1 = init succeeded; 2 = wrong
// message; 3 = too slow.
int ExpectInitFails(const std::string& want, int rank) {
  auto t0 = std::chrono::steady_clock::now();
  auto comm = Communicator::InitFromEnv();
  double took = Since(t0);
  if (comm.ok()) return 1;
  std::string msg = comm.status().ToString();
  fprintf(stderr, "rank %d after %.2f s: %s\n", rank, took, msg.c_str());
  if (msg.find(want) == std::string::npos) return 2;
  return took < kFast ? 0 : 3;
}

void ExpectAllCode0(const std::vector<RankEnd>& ends, const std::vector<size_t>& killed = {}) {
  for (size_t r = 0; r < ends.size(); ++r) {
    if (std::find(killed.begin(), killed.end(), r) != killed.end()) {
      EXPECT_EQ(ends[r].signal, SIGKILL) << "process " << r;
      continue;
    }
    EXPECT_TRUE(ends[r].exited) << "process " << r << " killed by signal " << ends[r].signal;
    EXPECT_EQ(ends[r].code, 0) << "process " << r << " (1: init succeeded, 2: wrong message, 3: too slow)";
  }
}

TEST(Misconfig, WorldSizesThatDifferAreNamed) {
  ExpectAllCode0(RunProcRanks(2, [](int rank) {
    if (rank == 1) setenv("WORLD_SIZE", "3", 1);
    return ExpectInitFails("world sizes differ", rank);
  }, {{"TUTTI_STORE_TIMEOUT", kStoreTimeout}}, 200));
}

TEST(Misconfig, TwoProcessesClaimingOneRankAreNamed) {
  // Process 2 says it is rank 1: rank 2 never comes, and rank 1 is claimed twice.
  ExpectAllCode0(RunProcRanks(3, [](int rank) {
    if (rank == 2) setenv("RANK", "1", 1);
    return ExpectInitFails("rank 1 is claimed by two processes", rank);
  }, {{"TUTTI_STORE_TIMEOUT", kStoreTimeout}}, 200));
}

TEST(Misconfig, SecondInitOnALiveStoreIsRefusedAndTheFirstStillWorks) {
  ExpectAllCode0(RunProcRanks(2, [](int rank) {
    auto first = Communicator::InitFromEnv();
    if (!first.ok()) return 10;
    // Same MASTER_PORT again: rank 0 cannot host a second store there, and rank 1 reaches the
    // first one, where a communicator was already formed.
    int code = ExpectInitFails(rank == 0 ? "choose another MASTER_PORT" : "already formed on this store", rank);
    if (code != 0) return code;
    // A round trip: rank 0 (whose store rank 1's second init may still be calling) stays until
    // rank 1 has answered (a small send completes once buffered, before it is received).
    int x = rank == 0 ? 41 : 0;
    Status st = rank == 0 ? (*first)->Send(&x, sizeof(x), 1) : (*first)->Recv(&x, sizeof(x), 0);
    if (!st.ok() || x != 41) return 11;
    x = 42;
    st = rank == 0 ? (*first)->Recv(&x, sizeof(x), 1) : (*first)->Send(&x, sizeof(x), 0);
    if (!st.ok() || x != 42) return 12;
    return 0;
  }, {{"TUTTI_STORE_TIMEOUT", kStoreTimeout}}, 200));
}

// Rank 2 claims its rank in the store the way init does, then dies (kill -9) before its card:
// the other ranks, on the same machine, see its process gone and fail at once naming it
// instead of waiting for the store timeout.
TEST(Misconfig, RankThatDiesDuringInitIsNamedFast) {
  ExpectAllCode0(RunProcRanks(3, [](int rank) {
    if (rank != 2) return ExpectInitFails("rank 2 (pid", rank);
    auto store = TcpStoreClient::Connect(getenv("MASTER_ADDR"), atoi(getenv("MASTER_PORT")),
                                         getenv("TUTTI_SECRET") ? getenv("TUTTI_SECRET") : "", 30);
    if (!store.ok()) return 20;
    if (!(*store)->Add("tutti/world/claim/2", 1).ok()) return 21;
    if (!(*store)->Set("tutti/world/proc/2", ProcessIdentity()).ok()) return 22;
    raise(SIGKILL);
    return 23;
  }, {{"TUTTI_STORE_TIMEOUT", kStoreTimeout}}, 200), /*killed=*/{2});
}

}  // namespace
}  // namespace tutti::testing
