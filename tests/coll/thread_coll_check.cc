#include "tests/coll/thread_coll_check.h"

#include <gtest/gtest.h>

#include <atomic>

#include "tests/harness/thread_ranks.h"

namespace tutti::testing {

void ExpectCollectivesPassOnThreadRanks(int n, const CommOptions& opts, const CollCheckConfig& cfg, int min_cases) {
  std::atomic<int> cases{0}, failures{0};
  RunThreadRanks(n, [&](Communicator& c) {
    CollCheckResult r = CheckCollectives(c, cfg);
    if (c.rank() == 0) cases = r.cases;
    failures += r.failures;
    c.Destroy();
  }, opts);
  EXPECT_GT(cases.load(), min_cases);
  EXPECT_EQ(failures.load(), 0) << "failures are printed above";
}

}  // namespace tutti::testing
