// Reliability of a communicator under long and careless use (threads as ranks): per-call state
// is released when calls end, and two threads issuing collectives on one communicator are
// caught instead of silently pairing the wrong calls across ranks.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "tests/harness/thread_ranks.h"

namespace tutti::testing {
namespace {

using Clock = std::chrono::steady_clock;

class Reliability : public ::testing::TestWithParam<std::string> {
 protected:
  CommOptions Opts(double timeout_s = 60) {
    CommOptions o;
    o.transport = GetParam();
    o.timeout_s = timeout_s;
    return o;
  }
};

void ExpectIdle(const Communicator& c, const char* when) {
  Communicator::Stats st = c.stats();
  EXPECT_EQ(st.pending_ops, 0u) << "rank " << c.rank() << " " << when;
  EXPECT_EQ(st.tracked_messages, 0u) << "rank " << c.rank() << " " << when;
  EXPECT_EQ(st.tag_queues, 0u) << "rank " << c.rank() << " " << when;
  EXPECT_EQ(st.collectives_in_flight, 0u) << "rank " << c.rank() << " " << when;
}

// Every kind of call, small and past the eager limit, blocking and async, receives posted
// before and after their sends: afterwards the communicator holds nothing for them.
TEST_P(Reliability, CallsLeaveNothingBehind) {
  RunThreadRanks(3, [&](Communicator& c) {
    const int n = c.size(), me = c.rank();
    // 1.2 MB goes by rendezvous (and over the 1 MiB up to which shm calls take the slots).
    constexpr size_t kLarge = 300000;
    std::vector<float> in(kLarge * n, 1.0f), out(kLarge * n);
    for (int i = 0; i < 300; ++i) {
      const size_t count = i % 3 == 0 ? kLarge : 3;
      ASSERT_TRUE(c.AllReduce(in.data(), out.data(), count, DataType::kFloat32, RedOp::kSum).ok());
      ASSERT_EQ(out[0], static_cast<float>(n));
      ASSERT_TRUE(c.AllGather(in.data(), out.data(), count, DataType::kFloat32).ok());
      ASSERT_TRUE(c.Broadcast(in.data(), out.data(), count, DataType::kFloat32, i % n).ok());
      auto w = c.IReduceScatter(out.data(), in.data(), count, DataType::kFloat32, RedOp::kMax);
      ASSERT_TRUE(w.ok());
      ASSERT_TRUE(c.Barrier().ok());
      ASSERT_TRUE(w->Wait().ok());
      // Point-to-point around the ring, with and without unexpected messages.
      const int next = (me + 1) % n, prev = (me + n - 1) % n;
      std::vector<char> sbuf(count * 4, 'x'), rbuf(count * 4);
      if (i % 2) std::this_thread::sleep_for(std::chrono::microseconds(me * 50));
      auto r = c.IRecv(rbuf.data(), rbuf.size(), prev, i % 7);
      auto s = c.ISend(sbuf.data(), sbuf.size(), next, i % 7);
      ASSERT_TRUE(r.ok() && s.ok());
      ASSERT_TRUE(s->Wait().ok());
      ASSERT_TRUE(r->Wait().ok());
    }
    Status last = c.Barrier();
    ASSERT_TRUE(last.ok()) << last.ToString();
    ExpectIdle(c, "after 1800 calls");
    // Planned once per distinct call: all_reduce, all_gather, reduce_scatter x 2 counts,
    // broadcast x 3 (count, root) pairs (the large count always has root 0), barrier; over
    // shm the small calls and the barrier go through the shared slots, which plan nothing, and
    // so do the large broadcast and (where each rank has a CPU) all_gather where they are direct
    // slot calls (where the ranks can read each other's memory).
    size_t shm_plans = 4;
    if (c.stats().direct_slot_calls > 0) shm_plans -= sysconf(_SC_NPROCESSORS_ONLN) >= n ? 2 : 1;
    EXPECT_EQ(c.stats().cached_plans, GetParam() == std::string("shm") ? shm_plans : 10u);
  }, Opts());
}

// A receive that times out is withdrawn without leaving a queue behind.
TEST_P(Reliability, TimedOutReceiveLeavesNothingBehind) {
  RunThreadRanks(2, [&](Communicator& c) {
    if (c.rank() == 0) {
      char b[8];
      Status st = c.Recv(b, sizeof(b), 1, 42, 0.05);
      EXPECT_EQ(st.code(), Code::kTimeout) << st.ToString();
    }
    ASSERT_TRUE(c.Barrier().ok());
    ExpectIdle(c, "after a withdrawn receive");
  }, Opts());
}

// Rank 0 runs an all_reduce in thread A that cannot finish yet (rank 1 calls late); thread B
// then issues another collective on the same communicator. B is refused with kInvalidUsage
// naming both calls, and the communicator fails everywhere, promptly, rather than pairing the
// calls with the wrong ones on rank 1.
TEST_P(Reliability, TwoThreadsIssuingCollectivesAreCaught) {
  RunThreadRanks(2, [&](Communicator& c) {
    float x = 1, y = 0;
    if (c.rank() == 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(400));
      auto start = Clock::now();
      Status st = c.AllReduce(&x, &y, 1, DataType::kFloat32, RedOp::kSum);
      EXPECT_FALSE(st.ok());
      EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 20.0) << st.ToString();
      return;
    }
    Status a_status;
    std::thread a([&] { a_status = c.AllReduce(&x, &y, 1, DataType::kFloat32, RedOp::kSum); });
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    float p = 2, q = 0;
    Status b_status = c.AllReduce(&p, &q, 1, DataType::kFloat32, RedOp::kMax);
    a.join();
    EXPECT_EQ(b_status.code(), Code::kInvalidUsage) << b_status.ToString();
    EXPECT_NE(b_status.message().find("all_reduce #1"), std::string::npos) << b_status.ToString();
    EXPECT_NE(b_status.message().find("max"), std::string::npos) << b_status.ToString();
    EXPECT_NE(b_status.message().find("one thread at a time"), std::string::npos) << b_status.ToString();
    EXPECT_FALSE(a_status.ok());
  }, Opts(30));
}

// Handing the communicator from one thread to another once the first thread's collectives are
// complete is fine.
TEST_P(Reliability, ThreadsTakingTurnsAreFine) {
  RunThreadRanks(2, [&](Communicator& c) {
    for (int turn = 0; turn < 4; ++turn) {
      std::thread t([&] {
        for (int i = 0; i < 20; ++i) {
          int x = turn, y = -1;
          ASSERT_TRUE(c.AllReduce(&x, &y, 1, DataType::kInt32, RedOp::kSum).ok());
          ASSERT_EQ(y, 2 * turn);
        }
      });
      t.join();
    }
    ExpectIdle(c, "after four threads took turns");
  }, Opts());
}

// Small collective sends complete without waiting for their receiver, so a broadcast's root may
// run ahead of a rank that is busy; what that rank holds meanwhile is bounded by the eager
// budget (4 MiB per peer, each message counted with kPostOverhead), after which the root waits.
TEST_P(Reliability, ARootRunningAheadIsHeldByTheEagerBudget) {
  if (GetParam() != std::string("tcp")) GTEST_SKIP() << "small calls over shm take the slots";
  constexpr int kCalls = 30000;
  constexpr size_t kMaxHeld = (4u << 20) / (8 + kPostOverhead);
  RunThreadRanks(2, [&](Communicator& c) {
    float v[2] = {0, 0};
    if (c.rank() == 0) {
      for (int i = 0; i < kCalls; ++i) {
        v[0] = static_cast<float>(i);
        ASSERT_TRUE(c.Broadcast(v, v, 2, DataType::kFloat32, 0).ok()) << i;
      }
    } else {
      // Busy for a while, but progressing: a receive nobody sends to, withdrawn at its timeout.
      char b[4];
      ASSERT_EQ(c.Recv(b, sizeof b, 0, 99, 0.5).code(), Code::kTimeout);
      const size_t held = c.stats().tracked_messages;
      EXPECT_GT(held, 1000u) << "the root did not run ahead";
      EXPECT_LE(held, kMaxHeld + 16) << "the root ran ahead past the eager budget";
      for (int i = 0; i < kCalls; ++i) {
        ASSERT_TRUE(c.Broadcast(v, v, 2, DataType::kFloat32, 0).ok()) << i;
        ASSERT_EQ(v[0], static_cast<float>(i));
      }
    }
    ASSERT_TRUE(c.Barrier().ok());
    ExpectIdle(c, "after the root ran ahead");
  }, Opts());
}

INSTANTIATE_TEST_SUITE_P(Transports, Reliability, ::testing::Values("shm", "tcp"));

}  // namespace
}  // namespace tutti::testing
