// Every collective x type x op x count, on 1..8 real processes, over shm and over tcp (and on 3
// and 4 with pairs connected lazily; on 2, 5 and 8 with all calls through the shared slots in
// small rounds, and with no slots).
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "core/communicator.h"
#include "tests/coll/coll_check.h"
#include "tests/harness/proc_ranks.h"

namespace tutti::testing {
namespace {

class Collectives : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(Collectives, AllCasesPass) {
  const auto [transport, n] = GetParam();
  auto ends = RunProcRanks(n, [](int rank) {
    auto comm = Communicator::InitFromEnv();
    if (!comm.ok()) {
      fprintf(stderr, "rank %d: %s\n", rank, comm.status().ToString().c_str());
      return 2;
    }
    CollCheckConfig cfg;
    CollCheckResult res = CheckCollectives(**comm, cfg);
    if (rank == 0) fprintf(stderr, "rank 0: %d collective calls checked, %d failed\n", res.cases, res.failures);
    // Every rank done before any leaves: rank 0's process serves the store, through which the
    // other ranks' sub-communicators may still be connecting their pairs (TUTTI_CONNECT=lazy).
    // Once it is gone they fail ("the connection to the store ... is closed"), as the CI saw.
    Status done = (*comm)->Barrier();
    if (!done.ok()) fprintf(stderr, "rank %d: final barrier: %s\n", rank, done.ToString().c_str());
    (*comm)->Destroy();
    return res.failures == 0 && res.cases > 0 && done.ok() ? 0 : 1;
  }, {{"TUTTI_TRANSPORT", transport.substr(0, transport.find('_'))},
        {"TUTTI_CONNECT", transport.find("_lazy") != std::string::npos ? "lazy" : "eager"},
        // _slotrounds: every call that takes no named algorithm goes through the shared slots,
        // in rounds of 128 bytes (a 16-byte element per rank's block at 8 ranks); _noslots:
        // every call as messages.
        {"TUTTI_SLOT_MAX", transport.find("_slotrounds") != std::string::npos ? "1073741824"
                           : transport.find("_noslots") != std::string::npos  ? "0"
                                                                                : "1048576"},
        {"TUTTI_SLOT_BYTES", transport.find("_slotrounds") != std::string::npos ? "128" : "65536"},
        {"TUTTI_TIMEOUT", "60"}}, 600);
  for (int r = 0; r < n; ++r) {
    EXPECT_TRUE(ends[r].exited) << "rank " << r << " killed by signal " << ends[r].signal;
    EXPECT_EQ(ends[r].code, 0) << "rank " << r << " (failures are printed above)";
  }
}

INSTANTIATE_TEST_SUITE_P(Worlds, Collectives,
                         ::testing::Combine(::testing::Values("shm", "tcp"), ::testing::Range(1, 9)),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_" + std::to_string(std::get<1>(info.param)) + "ranks";
                         });

// Pairs connected lazily (TUTTI_CONNECT=lazy), by processes: an odd and an even world.
INSTANTIATE_TEST_SUITE_P(LazyWorlds, Collectives,
                         ::testing::Combine(::testing::Values("shm_lazy", "tcp_lazy"), ::testing::Values(3, 4)),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_" + std::to_string(std::get<1>(info.param)) + "ranks";
                         });

// Single-host worlds with every call through the slots in many small rounds, and with none.
INSTANTIATE_TEST_SUITE_P(SlotWorlds, Collectives,
                         ::testing::Combine(::testing::Values("shm_slotrounds", "shm_noslots"), ::testing::Values(2, 5, 8)),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_" + std::to_string(std::get<1>(info.param)) + "ranks";
                         });

}  // namespace
}  // namespace tutti::testing
