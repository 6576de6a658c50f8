// Groups of calls (GroupStart / GroupEnd) over shm and tcp: head-to-head sends of rendezvous
// size and ring shifts that would deadlock as plain blocking calls, several collectives and
// v-collectives of one communicator and of a sub-communicator in one group, nesting, CallGroup's
// scope, calls refused in a group (and reported again by GroupEnd), and a call that never
// completes failing GroupEnd within its timeout.
#include <gtest/gtest.h>

#include <chrono>
#include <numeric>
#include <vector>

#include "core/group.h"
#include "tests/harness/thread_ranks.h"

namespace tutti::testing {
namespace {

class Group : public ::testing::TestWithParam<std::string> {
 protected:
  CommOptions Opts(double timeout_s = 60) {
    CommOptions o;
    o.transport = GetParam();
    o.timeout_s = timeout_s;
    return o;
  }
};

TEST_P(Group, HeadToHeadSendsOfRendezvousSize) {
  // Both ranks send first: as blocking calls these wait for each other's receive forever.
  const size_t bytes = 8 << 20;
  RunThreadRanks(2, [&](Communicator& c) {
    const int peer = 1 - c.rank();
    std::vector<char> out(bytes), in(bytes, 0);
    FillPattern(out.data(), bytes, 100 + c.rank());
    GroupStart();
    ASSERT_TRUE(c.Send(out.data(), bytes, peer, 7).ok());
    ASSERT_TRUE(c.Recv(in.data(), bytes, peer, 7).ok());
    Status st = GroupEnd();
    ASSERT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(FirstMismatch(in.data(), bytes, 100 + peer), -1);
    EXPECT_FALSE(InGroup());
  }, Opts());
}

TEST_P(Group, RingShiftBothWays) {
  const size_t bytes = 1 << 20;
  RunThreadRanks(4, [&](Communicator& c) {
    const int n = c.size(), r = c.rank(), right = (r + 1) % n, left = (r + n - 1) % n;
    std::vector<char> out(bytes), from_left(bytes), from_right(bytes);
    FillPattern(out.data(), bytes, r);
    GroupStart();
    ASSERT_TRUE(c.Send(out.data(), bytes, right, 1).ok());
    ASSERT_TRUE(c.Send(out.data(), bytes, left, 2).ok());
    ASSERT_TRUE(c.Recv(from_left.data(), bytes, left, 1).ok());
    ASSERT_TRUE(c.Recv(from_right.data(), bytes, right, 2).ok());
    Status st = GroupEnd();
    ASSERT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(FirstMismatch(from_left.data(), bytes, left), -1);
    EXPECT_EQ(FirstMismatch(from_right.data(), bytes, right), -1);
  }, Opts());
}

TEST_P(Group, CollectivesOfTwoCommunicatorsInOneGroup) {
  for (size_t count : {size_t{3}, size_t{50000}}) {  // slot-sized and scheduled collectives
    RunThreadRanks(4, [&](Communicator& c) {
      auto half = c.Split(c.rank() % 2, c.rank());
      ASSERT_TRUE(half.ok()) << half.status().ToString();
      Communicator& h = **half;
      const int n = c.size(), r = c.rank();
      std::vector<int32_t> x(count), sum(count, -1), gathered(count * n, -1), bcast(count, -1), hsum(count, -1);
      for (size_t i = 0; i < count; ++i) x[i] = static_cast<int32_t>(r * 1000 + i % 997);
      if (r == 2) bcast = x;
      // All-gather-v: rank k gives k + 1 elements (rank 0 none when count is small is covered
      // by the v tests; here every block is non-empty).
      Communicator::Blocks rb;
      for (int k = 0; k < n; ++k) rb.counts.push_back(k + 1);
      std::vector<int32_t> vout(n * (n + 1) / 2, -1), vin(r + 1, r);
      {
        CallGroup g;
        ASSERT_TRUE(c.AllReduce(x.data(), sum.data(), count, DataType::kInt32, RedOp::kSum).ok());
        ASSERT_TRUE(c.AllGather(x.data(), gathered.data(), count, DataType::kInt32).ok());
        ASSERT_TRUE(c.Broadcast(bcast.data(), bcast.data(), count, DataType::kInt32, 2).ok());
        ASSERT_TRUE(h.AllReduce(x.data(), hsum.data(), count, DataType::kInt32, RedOp::kSum).ok());
        ASSERT_TRUE(c.AllGatherV(vin.data(), vin.size(), vout.data(), rb, DataType::kInt32).ok());
        ASSERT_TRUE(c.Barrier().ok());
        Status st = g.End();
        ASSERT_TRUE(st.ok()) << st.ToString();
      }
      for (size_t i = 0; i < count; ++i) {
        const int32_t base = static_cast<int32_t>(i % 997);
        ASSERT_EQ(sum[i], 1000 * (0 + 1 + 2 + 3) + 4 * base) << i;
        ASSERT_EQ(bcast[i], 2000 + base) << i;
        ASSERT_EQ(hsum[i], 1000 * (r % 2 == 0 ? 0 + 2 : 1 + 3) + 2 * base) << i;
        for (int k = 0; k < n; ++k) ASSERT_EQ(gathered[k * count + i], 1000 * k + base) << k << " " << i;
      }
      size_t at = 0;
      for (int k = 0; k < n; ++k)
        for (int j = 0; j <= k; ++j) ASSERT_EQ(vout[at++], k);
    }, Opts());
  }
}

TEST_P(Group, NestedGroupsWaitAtTheOutermostEnd) {
  RunThreadRanks(2, [&](Communicator& c) {
    const int peer = 1 - c.rank();
    int out = 10 + c.rank(), in = -1;
    GroupStart();
    GroupStart();
    ASSERT_TRUE(c.Send(&out, sizeof out, peer, 3).ok());
    ASSERT_TRUE(GroupEnd().ok());
    EXPECT_TRUE(InGroup());
    ASSERT_TRUE(c.Recv(&in, sizeof in, peer, 3).ok());
    Status st = GroupEnd();
    ASSERT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(in, 10 + peer);
    EXPECT_FALSE(InGroup());
    EXPECT_EQ(GroupEnd().code(), Code::kInvalidUsage);  // no group open
  }, Opts());
}

TEST_P(Group, RefusedCallIsReportedAgainByGroupEnd) {
  RunThreadRanks(2, [&](Communicator& c) {
    const int peer = 1 - c.rank();
    int out = c.rank(), in = -1, any = -1;
    GroupStart();
    EXPECT_EQ(c.Send(&out, sizeof out, peer, -5).code(), Code::kInvalidArgument);  // reserved tag
    auto who = c.RecvAny(&any, sizeof any, 0);
    EXPECT_EQ(who.status().code(), Code::kInvalidUsage);
    EXPECT_NE(who.status().ToString().find("group"), std::string::npos) << who.status().ToString();
    ASSERT_TRUE(c.Send(&out, sizeof out, peer, 4).ok());
    ASSERT_TRUE(c.Recv(&in, sizeof in, peer, 4).ok());
    Status st = GroupEnd();
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << st.ToString();
    EXPECT_EQ(in, peer);  // the calls that started were still waited for
    // The thread's next group starts clean.
    GroupStart();
    ASSERT_TRUE(c.Send(&out, sizeof out, peer, 5).ok());
    ASSERT_TRUE(c.Recv(&in, sizeof in, peer, 5).ok());
    EXPECT_TRUE(GroupEnd().ok());
  }, Opts());
}

TEST_P(Group, CallThatNeverCompletesFailsGroupEndInItsTimeout) {
  RunThreadRanks(2, [&](Communicator& c) {
    int in = -1;
    if (c.rank() == 1) {  // never sends tag 6; stays until rank 0 is done
      ASSERT_TRUE(c.Recv(&in, sizeof in, 0, 8).ok());
      return;
    }
    GroupStart();
    ASSERT_TRUE(c.Recv(&in, sizeof in, 1, 6, /*timeout_s=*/0.5).ok());
    auto t0 = std::chrono::steady_clock::now();
    Status st = GroupEnd();
    double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(st.code(), Code::kTimeout) << st.ToString();
    EXPECT_NE(st.ToString().find("recv in a group"), std::string::npos) << st.ToString();
    EXPECT_LT(took, 10.0);
    ASSERT_TRUE(c.Send(&in, sizeof in, 1, 8).ok());
  }, Opts());
}

INSTANTIATE_TEST_SUITE_P(Transports, Group, ::testing::Values("shm", "tcp"));

}  // namespace
}  // namespace tutti::testing
