#include <gtest/gtest.h>

#include <vector>

#include "algorithms/registry.h"
#include "algorithms/testing.h"

namespace tutti::algo {
namespace {

TEST(Pairwise, AllToAll) { EXPECT_GT(testing::Sweep("pairwise", Collective::kAllToAll), 0); }

// Built for distinct buffers: every block received straight into the output, nothing parked in
// scratch or copied afterwards but the own block.
TEST(Pairwise, AllToAllForDistinctBuffers) {
  testing::SweepOptions o;
  o.distinct = true;
  EXPECT_GT(testing::Sweep("pairwise", Collective::kAllToAll, o), 0);
  for (int n : {2, 3, 4, 7}) {
    for (int r = 0; r < n; ++r) {
      CollArgs a;
      a.coll = Collective::kAllToAll;
      a.nranks = n;
      a.rank = r;
      a.count = 5;
      a.distinct = true;
      Result<Schedule> s = BuildSchedule("pairwise", a);
      ASSERT_TRUE(s.ok()) << s.status().ToString();
      int copies = 0;
      for (const Step& step : s->streams[0].steps) {
        for (const Transfer& t : step.recvs) EXPECT_EQ(t.region.buf, Buf::kOutput) << DescribeArgs(a);
        copies += static_cast<int>(step.locals.size());
      }
      EXPECT_EQ(copies, 1) << DescribeArgs(a) << ": only the own block is copied";
      EXPECT_EQ(s->scratch_count, 0u) << DescribeArgs(a);
    }
  }
}

// Ranks may differ in whether their buffers overlap (one in place, one not): their schedules'
// messages pair up all the same.
TEST(Pairwise, RanksWithAndWithoutDistinctBuffersPairUp) {
  for (int n : {2, 3, 4, 5, 8}) {
    for (uint64_t count : {1, 7, 100}) {
      for (int nch : {1, 2}) {
        CollArgs a;
        a.coll = Collective::kAllToAll;
        a.nranks = n;
        a.count = count;
        a.nchannels = nch;
        std::vector<Schedule> schedules;
        for (int r = 0; r < n; ++r) {
          CollArgs mine = a;
          mine.rank = r;
          mine.distinct = r % 2 == 0;
          Result<Schedule> s = BuildSchedule("pairwise", mine);
          ASSERT_TRUE(s.ok()) << s.status().ToString();
          schedules.push_back(std::move(*s));
        }
        EXPECT_EQ(testing::CheckSchedules(a, schedules), "");
      }
    }
  }
}

}  // namespace
}  // namespace tutti::algo
