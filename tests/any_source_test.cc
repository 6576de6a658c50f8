// Receives from any source (kAnySource, MPI_ANY_SOURCE) over shm and tcp, eager and rendezvous
// sizes: every sender's message arrives once and intact, Work::source() names its sender,
// messages from one sender keep their order, receives match in the order posted (any-source and
// named ones mixed), and timeouts, size mismatches and departed peers are clear errors.
#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <thread>
#include <vector>

#include "core/p2p/engine.h"
#include "tests/harness/thread_ranks.h"

namespace tutti::testing {
namespace {

class AnySource : public ::testing::TestWithParam<std::string> {
 protected:
  CommOptions Opts(double timeout_s = 30) {
    CommOptions o;
    o.transport = GetParam().rfind("tcp", 0) == 0 ? "tcp" : "shm";
    o.lazy_connect = GetParam().find("+lazy") != std::string::npos;
    o.timeout_s = timeout_s;
    return o;
  }
};

TEST_P(AnySource, EverySenderOnceWithItsData) {
  for (size_t size : {size_t{0}, size_t{13}, size_t{65537}, (size_t{1} << 20) + 13}) {
    const int n = 4;
    RunThreadRanks(n, [&](Communicator& c) {
      if (c.rank() != 0) {
        std::vector<char> out(size);
        FillPattern(out.data(), size, c.rank() + size);
        ASSERT_TRUE(c.Send(out.data(), size, 0, 3).ok());
        return;
      }
      std::set<int> seen;
      for (int i = 1; i < n; ++i) {
        std::vector<char> in(size, 0);
        auto src = c.RecvAny(in.data(), size, 3);
        ASSERT_TRUE(src.ok()) << src.status().ToString();
        ASSERT_GT(*src, 0);
        ASSERT_LT(*src, n);
        EXPECT_TRUE(seen.insert(*src).second) << "rank " << *src << " twice";
        EXPECT_EQ(FirstMismatch(in.data(), size, *src + size), -1) << "size " << size << " from " << *src;
      }
      EXPECT_EQ(c.stats().tracked_messages, 0u);
      EXPECT_EQ(c.stats().tag_queues, 0u);
    }, Opts());
  }
}

TEST_P(AnySource, OneSendersMessagesKeepTheirOrder) {
  RunThreadRanks(3, [&](Communicator& c) {
    constexpr int kMsgs = 20;
    if (c.rank() != 0) {
      std::vector<Work> sends;
      std::vector<int> vals(kMsgs);
      for (int i = 0; i < kMsgs; ++i) {
        vals[i] = c.rank() * 1000 + i;
        sends.push_back(*c.ISend(&vals[i], sizeof(int), 0, 1));
      }
      for (auto& w : sends) ASSERT_TRUE(w.Wait().ok()) << w.status().ToString();
      return;
    }
    std::vector<int> got(2 * kMsgs, -1);
    std::vector<Work> recvs;
    for (int i = 0; i < 2 * kMsgs; ++i) recvs.push_back(*c.IRecv(&got[i], sizeof(int), kAnySource, 1));
    int next[3] = {0, 0, 0};
    for (int i = 0; i < 2 * kMsgs; ++i) {
      ASSERT_TRUE(recvs[i].Wait().ok()) << recvs[i].status().ToString();
      const int src = recvs[i].source();
      ASSERT_TRUE(src == 1 || src == 2) << src;
      EXPECT_EQ(got[i], src * 1000 + next[src]) << "receive " << i;
      ++next[src];
    }
    EXPECT_EQ(next[1], kMsgs);
    EXPECT_EQ(next[2], kMsgs);
  }, Opts());
}

TEST_P(AnySource, ReceivesMatchInTheOrderPosted) {
  RunThreadRanks(2, [&](Communicator& c) {
    int a = -1, b = -1, d = -1;
    if (c.rank() == 0) {
      // any-source, then one naming rank 1, then any-source again: rank 1's three messages go to
      // them in that order.
      Work wa = *c.IRecv(&a, sizeof(int), kAnySource, 4);
      Work wb = *c.IRecv(&b, sizeof(int), 1, 4);
      Work wd = *c.IRecv(&d, sizeof(int), kAnySource, 4);
      ASSERT_TRUE(c.Send(&a, 0, 1, 99).ok());  // go
      for (Work* w : {&wa, &wb, &wd}) ASSERT_TRUE(w->Wait().ok()) << w->status().ToString();
      EXPECT_EQ(a, 10);
      EXPECT_EQ(b, 11);
      EXPECT_EQ(d, 12);
      EXPECT_EQ(wa.source(), 1);
      EXPECT_EQ(wb.source(), 1);
    } else {
      ASSERT_TRUE(c.Recv(&a, 0, 0, 99).ok());
      for (int v : {10, 11, 12}) ASSERT_TRUE(c.Send(&v, sizeof(int), 0, 4).ok());
    }
  }, Opts());
}

TEST_P(AnySource, MessagesThatArrivedFirstAreTaken) {
  RunThreadRanks(3, [&](Communicator& c) {
    int v = c.rank() * 7, got = -1;
    if (c.rank() == 1) {
      Work w = *c.ISend(&v, sizeof(int), 0, 2);  // arrives unmatched
      ASSERT_TRUE(w.Wait().ok()) << w.status().ToString();
      ASSERT_TRUE(c.Send(&v, 0, 2, 50).ok());  // now rank 2 may send
    } else if (c.rank() == 2) {
      ASSERT_TRUE(c.Recv(&v, 0, 1, 50).ok());
      ASSERT_TRUE(c.Send(&v, sizeof(int), 0, 2).ok());
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));  // both usually here by now
      auto first = c.RecvAny(&got, sizeof(int), 2);
      ASSERT_TRUE(first.ok()) << first.status().ToString();
      EXPECT_EQ(got, *first * 7);
      auto second = c.RecvAny(&got, sizeof(int), 2);
      ASSERT_TRUE(second.ok()) << second.status().ToString();
      EXPECT_EQ(got, *second * 7);
      EXPECT_NE(*first, *second);
    }
  }, Opts());
}

TEST_P(AnySource, TimeoutWithdrawsAndTheCommunicatorStaysUsable) {
  RunThreadRanks(2, [&](Communicator& c) {
    int x = 5;
    if (c.rank() == 0) {
      auto r = c.RecvAny(&x, sizeof(x), 8, 0.2);
      ASSERT_FALSE(r.ok());
      EXPECT_EQ(r.status().code(), Code::kTimeout);
      EXPECT_NE(r.status().message().find("from any rank (tag 8"), std::string::npos) << r.status().message();
      EXPECT_EQ(c.stats().tag_queues, 0u);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    Status ok = c.rank() == 1 ? c.Send(&x, sizeof(x), 0, 8) : c.RecvAny(&x, sizeof(x), 8).status();
    EXPECT_TRUE(ok.ok()) << ok.ToString();
  }, Opts());
}

// The receive fails; so does a send that waits for it (a buffered one completed already).
TEST_P(AnySource, SizeMismatchFailsTheReceiveAndASendThatWaits) {
  for (size_t size : {size_t{16}, size_t{kBufferedSendMax + 16}}) {
    RunThreadRanks(2, [&](Communicator& c) {
      std::vector<char> buf(size);
      Status st = c.rank() == 1 ? c.Send(buf.data(), size, 0, 6) : c.RecvAny(buf.data(), size - 8, 6).status();
      if (c.rank() == 1 && size <= kBufferedSendMax)
        EXPECT_TRUE(st.ok()) << st.ToString();
      else
        EXPECT_EQ(st.code(), Code::kMismatch) << st.ToString();
    }, Opts());
  }
}

TEST_P(AnySource, PendingReceiveFailsWhenEveryPeerHasLeft) {
  RunThreadRanks(3, [&](Communicator& c) {
    int x;
    if (c.rank() == 0) {
      // With lazy connection nobody ever connected to us, so nobody can say goodbye: the
      // receive ends at its timeout instead.
      const bool lazy = *Opts().lazy_connect;
      auto r = c.RecvAny(&x, sizeof(x), 0, lazy ? 1 : 20);
      ASSERT_FALSE(r.ok());
      if (lazy) {
        EXPECT_EQ(r.status().code(), Code::kTimeout) << r.status().ToString();
        return;
      }
      EXPECT_EQ(r.status().code(), Code::kRemoteError) << r.status().ToString();
      EXPECT_NE(r.status().message().find("every other rank has closed"), std::string::npos) << r.status().message();
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(100 * c.rank()));
      c.Destroy();
    }
  }, Opts());
}

TEST(AnySourceArgs, RefusedWhereItCannotWork) {
  RunThreadRanks(1, [](Communicator& c) {
    int x;
    auto r = c.IRecv(&x, sizeof(x), kAnySource, 0);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
    EXPECT_NE(r.status().message().find("one rank"), std::string::npos) << r.status().message();
  });
  RunThreadRanks(2, [](Communicator& c) {
    int x;
    auto r = c.IRecv(&x, sizeof(x), -2, 0);  // not kAnySource: an invalid rank
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  });
}

INSTANTIATE_TEST_SUITE_P(Transports, AnySource, ::testing::Values("shm", "tcp", "shm+lazy"),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (char& ch : s)
                             if (ch == '+') ch = '_';
                           return s;
                         });

}  // namespace
}  // namespace tutti::testing
