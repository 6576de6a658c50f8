// Drives c_api_test.c (plain C) on 3 forked ranks.
#include <gtest/gtest.h>

#include "tests/harness/proc_ranks.h"

extern "C" int c_api_rank_main(void);

TEST(CApi, ThreeRanksFromC) {
  auto ends = tutti::testing::RunProcRanks(3, [](int) { return c_api_rank_main(); }, {}, 60);
  for (size_t r = 0; r < ends.size(); ++r) {
    EXPECT_TRUE(ends[r].exited) << "rank " << r;
    EXPECT_EQ(ends[r].code, 0) << "rank " << r;
  }
}
