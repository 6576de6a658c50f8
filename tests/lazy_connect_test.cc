// Lazy connection (TUTTI_CONNECT=lazy / CommOptions::lazy_connect) with ranks as threads: only
// the pairs a job uses connect; first messages around a cycle do not wait on each other; every
// collective works; sub-communicators connect lazily too; a peer that is gone is reported by
// rank, not waited for forever.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "tests/coll/thread_coll_check.h"
#include "tests/harness/thread_ranks.h"

namespace tutti::testing {
namespace {

class Lazy : public ::testing::TestWithParam<std::string> {
 protected:
  CommOptions Opts(double timeout_s = 60) {
    CommOptions o;
    o.transport = GetParam();
    o.lazy_connect = true;
    o.timeout_s = timeout_s;
    return o;
  }
};

TEST_P(Lazy, OnlyThePairsUsedConnect) {
  const int n = 6;
  RunThreadRanks(n, [&](Communicator& c) {
    const int r = c.rank(), next = (r + 1) % n, prev = (r + n - 1) % n;
    // Nothing is connected by init. (Only the pair three apart is checked: neighbours may
    // already have asked for their pairs, ranks that reach the barrier early for theirs.)
    const int far = (r + 3) % n;
    EXPECT_EQ(c.TransportTo(far), "none") << "rank " << r << " connected to " << far << " at init";
    // A ring exchange: each rank talks to its two neighbours only.
    std::vector<char> out(100000), in(100000);
    FillPattern(out.data(), out.size(), r);
    auto s = c.ISend(out.data(), out.size(), next, 1);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    ASSERT_TRUE(c.Recv(in.data(), in.size(), prev, 1).ok());
    ASSERT_TRUE(s->Wait().ok()) << s->status().ToString();
    EXPECT_EQ(FirstMismatch(in.data(), in.size(), prev), -1);
    EXPECT_EQ(c.TransportTo(next), GetParam());
    EXPECT_EQ(c.TransportTo(prev), GetParam());
    // Pairs three apart never exchange anything (the ring uses distance 1, the dissemination
    // barrier distances 1, 2 and 4): neither side asked.
    EXPECT_EQ(c.TransportTo(far), "none") << "rank " << r << " connected to unused " << far;
    ASSERT_TRUE(c.Barrier().ok());  // barrier connects whatever its schedule uses
  }, Opts());
}

TEST_P(Lazy, FirstSendsAroundACycleDoNotWaitOnEachOther) {
  const int n = 5;
  RunThreadRanks(n, [&](Communicator& c) {
    const int r = c.rank();
    // Every rank posts its first send (1 MiB: past the eager limit, so it needs the receiver)
    // to the next rank before it receives from the previous one: an ISend that waited for its
    // connection would leave the ring waiting on itself.
    std::vector<char> out(1 << 20), in(1 << 20);
    FillPattern(out.data(), out.size(), 7 * r);
    auto s = c.ISend(out.data(), out.size(), (r + 1) % n, 3);
    ASSERT_TRUE(s.ok());
    ASSERT_TRUE(c.Recv(in.data(), in.size(), (r + n - 1) % n, 3).ok());
    ASSERT_TRUE(s->Wait().ok());
    EXPECT_EQ(FirstMismatch(in.data(), in.size(), 7 * ((r + n - 1) % n)), -1);
  }, Opts());
}

TEST_P(Lazy, EveryCollectiveWorks) {
  CollCheckConfig cfg;
  cfg.counts = {0, 1, 300};  // the connections are under test here, not the sizes
  ExpectCollectivesPassOnThreadRanks(4, Opts(), cfg);
}

TEST_P(Lazy, SplitCommunicatorsConnectLazily) {
  RunThreadRanks(4, [&](Communicator& c) {
    auto sub = c.Split(c.rank() % 2, c.rank());
    ASSERT_TRUE(sub.ok()) << sub.status().ToString();
    Communicator& s = **sub;
    ASSERT_EQ(s.size(), 2);
    std::vector<float> v(1000, static_cast<float>(c.rank()));
    CollOptions ring;  // as messages (a single-host communicator would use its shared slots)
    ring.algorithm = "ring";
    ASSERT_TRUE(s.AllReduce(v.data(), v.data(), v.size(), DataType::kFloat32, RedOp::kSum, ring).ok());
    EXPECT_EQ(v[999], c.rank() % 2 == 0 ? 2.0f : 4.0f);
    EXPECT_EQ(s.TransportTo(1 - s.rank()), GetParam());
  }, Opts());
}

TEST_P(Lazy, APeerThatIsGoneIsNamed) {
  RunThreadRanks(2, [&](Communicator& c) {
    if (c.rank() == 1) {
      c.Destroy();  // leaves before anyone asked it for a connection
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    char b = 1;
    const auto t0 = std::chrono::steady_clock::now();
    Status st = c.Send(&b, 1, 1, 0);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_FALSE(st.ok());
    EXPECT_NE(st.message().find("rank 1"), std::string::npos) << st.ToString();
    EXPECT_LT(secs, 30) << st.ToString();
  }, Opts(3));
}

INSTANTIATE_TEST_SUITE_P(Transports, Lazy, ::testing::Values("shm", "tcp"));

}  // namespace
}  // namespace tutti::testing
