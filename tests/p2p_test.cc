// Point-to-point over shm and tcp with ranks as threads: every pair, awkward sizes, ordering,
// posting order, mismatches, timeouts, abort.
#include <gtest/gtest.h>

#include <time.h>

#include <chrono>
#include <thread>
#include <vector>

#include "tests/harness/thread_ranks.h"

namespace tutti::testing {
namespace {

class P2P : public ::testing::TestWithParam<std::string> {
 protected:
  // "shm": every message through the FIFO; "shm+cma": large messages moved by
  // process_vm_readv/writev; "shm+copies": the default (TUTTI_SHM_CMA=copies: receives of up to
  // 4 MiB read one-sidedly, larger ones through the FIFO); "+lazy": pairs connect at their first
  // message instead of during init.
  CommOptions Opts(double timeout_s = 30) {
    CommOptions o;
    o.transport = GetParam().rfind("tcp", 0) == 0 ? "tcp" : "shm";
    if (GetParam() != "shm+copies") o.shm_cma = GetParam() == "shm+cma";
    o.lazy_connect = GetParam().find("+lazy") != std::string::npos;
    o.timeout_s = timeout_s;
    return o;
  }
};

const size_t kSizes[] = {0, 1, 7, 4099, 65536, 65537, (1 << 20) + 13, 9 << 20};

TEST_P(P2P, EveryPairEverySize) {
  for (int n : {2, 3, 5, 8}) {
    RunThreadRanks(n, [&](Communicator& c) {
      if (!Opts().lazy_connect) EXPECT_EQ(c.TransportTo((c.rank() + 1) % n), Opts().transport);
      for (size_t size : kSizes) {
        if (n > 3 && size > (1 << 20)) continue;  // keep the big ones to small worlds
        std::vector<Work> works;
        std::vector<std::vector<char>> out(n), in(n);
        for (int p = 0; p < n; ++p) {
          if (p == c.rank()) continue;
          out[p].resize(size);
          in[p].assign(size, 0);
          FillPattern(out[p].data(), size, c.rank() * 1000 + p + size);
          auto r = c.IRecv(in[p].data(), size, p, 5);
          ASSERT_TRUE(r.ok()) << r.status().ToString();
          works.push_back(*r);
          auto s = c.ISend(out[p].data(), size, p, 5);
          ASSERT_TRUE(s.ok()) << s.status().ToString();
          works.push_back(*s);
        }
        for (auto& w : works) ASSERT_TRUE(w.Wait().ok()) << w.status().ToString();
        for (int p = 0; p < n; ++p)
          if (p != c.rank())
            EXPECT_EQ(FirstMismatch(in[p].data(), size, p * 1000 + c.rank() + size), -1)
                << "n=" << n << " size=" << size << " from " << p;
      }
    }, Opts());
  }
}

TEST_P(P2P, RecvBeforeAndAfterSend) {
  RunThreadRanks(2, [&](Communicator& c) {
    for (size_t size : {size_t{16}, size_t{3} << 20}) {
      std::vector<char> buf(size);
      if (c.rank() == 0) {
        FillPattern(buf.data(), size, 1);
        // The recv on rank 1 is posted late the first time, early the second.
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        ASSERT_TRUE(c.Send(buf.data(), size, 1, 0).ok());
        ASSERT_TRUE(c.Send(buf.data(), size, 1, 0).ok());
      } else {
        ASSERT_TRUE(c.Recv(buf.data(), size, 0, 0).ok());
        EXPECT_EQ(FirstMismatch(buf.data(), size, 1), -1);
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        std::fill(buf.begin(), buf.end(), 0);
        ASSERT_TRUE(c.Recv(buf.data(), size, 0, 0).ok());
        EXPECT_EQ(FirstMismatch(buf.data(), size, 1), -1);
      }
    }
  }, Opts());
}

TEST_P(P2P, InOrderPerPeerAndTag) {
  const int kMsgs = 60;
  RunThreadRanks(2, [&](Communicator& c) {
    // Sizes alternate between eager and rendezvous so both paths interleave.
    auto size_of = [](int i) { return static_cast<size_t>(i % 3 == 0 ? 200000 + i : 8 + i); };
    std::vector<std::vector<char>> bufs(kMsgs);
    std::vector<Work> works;
    for (int i = 0; i < kMsgs; ++i) {
      bufs[i].resize(size_of(i));
      int tag = i % 2;  // two tags; per tag the order must hold
      if (c.rank() == 0) {
        FillPattern(bufs[i].data(), bufs[i].size(), i);
        works.push_back(*c.ISend(bufs[i].data(), bufs[i].size(), 1, tag));
      }
    }
    if (c.rank() == 1) {
      // Receive tag 1 first, then tag 0: matching is per tag.
      for (int tag : {1, 0})
        for (int i = tag; i < kMsgs; i += 2) works.push_back(*c.IRecv(bufs[i].data(), bufs[i].size(), 0, tag));
    }
    for (auto& w : works) ASSERT_TRUE(w.Wait().ok()) << w.status().ToString();
    if (c.rank() == 1)
      for (int i = 0; i < kMsgs; ++i) EXPECT_EQ(FirstMismatch(bufs[i].data(), bufs[i].size(), i), -1) << i;
  }, Opts());
}

// A send that waits for its receive (above kBufferedSendMax) fails with the receive; a buffered
// one completed already, and only the receive reports the mismatch. Both communicators stay usable.
TEST_P(P2P, SizeMismatchFailsTheReceiveAndASendThatWaits) {
  for (size_t size : {size_t{8}, size_t{kBufferedSendMax}, size_t{kBufferedSendMax + 1}, size_t{1} << 20}) {
    RunThreadRanks(2, [&](Communicator& c) {
      std::vector<char> buf(2 * size);
      Status st = c.rank() == 0 ? c.Send(buf.data(), size, 1, 3) : c.Recv(buf.data(), 2 * size, 0, 3);
      if (c.rank() == 0 && size <= kBufferedSendMax) {
        EXPECT_TRUE(st.ok()) << size << ": " << st.ToString();
      } else {
        EXPECT_EQ(st.code(), Code::kMismatch) << size << ": " << st.ToString();
        EXPECT_NE(st.message().find("rank " + std::to_string(1 - c.rank())), std::string::npos) << st.message();
      }
      int x = c.rank();
      Status ok = c.rank() == 0 ? c.Send(&x, sizeof(x), 1, 4) : c.Recv(&x, sizeof(x), 0, 4);
      EXPECT_TRUE(ok.ok()) << ok.ToString();
      if (c.rank() == 1) EXPECT_EQ(x, 0);
    }, Opts());
  }
}

// Sends of up to kBufferedSendMax complete once buffered, as MPI_Send's eager ones: two ranks may
// both send before they receive. Larger ones wait for their receive (a group pairs those up).
TEST_P(P2P, SmallSendsCompleteBeforeTheirReceiveIsPosted) {
  RunThreadRanks(2, [&](Communicator& c) {
    const int peer = 1 - c.rank();
    for (size_t size : {size_t{0}, size_t{8}, size_t{kBufferedSendMax}}) {
      std::vector<char> out(size), in(size, 0);
      FillPattern(out.data(), size, c.rank() + size);
      Status st = c.Send(out.data(), size, peer, 11, 5);
      ASSERT_TRUE(st.ok()) << size << ": " << st.ToString();
      st = c.Recv(in.data(), size, peer, 11);
      ASSERT_TRUE(st.ok()) << size << ": " << st.ToString();
      EXPECT_EQ(FirstMismatch(in.data(), size, peer + size), -1) << size;
    }
  }, Opts());
}

TEST_P(P2P, UnmatchedRecvTimesOutAndCommStaysUsable) {
  RunThreadRanks(2, [&](Communicator& c) {
    int x = 7;
    if (c.rank() == 1) {
      auto t0 = std::chrono::steady_clock::now();
      Status st = c.Recv(&x, sizeof(x), 0, 9, 0.2);
      double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      EXPECT_EQ(st.code(), Code::kTimeout);
      EXPECT_NE(st.message().find("from rank 0 (tag 9"), std::string::npos) << st.message();
      EXPECT_LT(took, 10.0);  // prompt, not the default timeout (loose: loaded CI)
    }
    // Both ranks get past the timeout before the next exchange.
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    Status ok = c.rank() == 0 ? c.Send(&x, sizeof(x), 1, 10) : c.Recv(&x, sizeof(x), 0, 10);
    EXPECT_TRUE(ok.ok()) << ok.ToString();
  }, Opts());
}

// A setting given in CommOptions wins over its environment variable (which here would be
// refused), so thread ranks with different settings need no setenv.
TEST(CommOptionsTest, SettingsWinOverTheEnvironment) {
  setenv("TUTTI_SOCKET_NSOCKS", "99", 1);  // out of range: init would fail if it were read
  setenv("TUTTI_EAGER_LIMIT", "-5", 1);
  CommOptions o;
  o.transport = "tcp";
  o.socket_nsocks = 3;
  o.eager_limit = 1024;
  RunThreadRanks(2, [&](Communicator& c) {
    int x = c.rank() == 0 ? 17 : 0;
    Status st = c.rank() == 0 ? c.Send(&x, sizeof(x), 1) : c.Recv(&x, sizeof(x), 0);
    EXPECT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(x, 17);
  }, o);
  unsetenv("TUTTI_SOCKET_NSOCKS");
  unsetenv("TUTTI_EAGER_LIMIT");
}

TEST_P(P2P, BadArgumentsAreClearErrors) {
  RunThreadRanks(2, [&](Communicator& c) {
    int x = 0;
    EXPECT_EQ(c.Send(&x, 4, 5, 0).code(), Code::kInvalidArgument);
    EXPECT_EQ(c.Send(&x, 4, -1, 0).code(), Code::kInvalidArgument);
    EXPECT_EQ(c.Send(&x, 4, c.rank(), 0).code(), Code::kInvalidArgument);
    EXPECT_EQ(c.Send(&x, 4, 1 - c.rank(), -3).code(), Code::kInvalidArgument);
    EXPECT_EQ(c.Recv(nullptr, 4, 1 - c.rank(), 0).code(), Code::kInvalidArgument);
    Status st = c.Send(&x, 4, 5, 0);
    EXPECT_NE(st.message().find("rank 5"), std::string::npos);
  }, Opts());
}

TEST_P(P2P, AbortWakesWaitersPromptly) {
  RunThreadRanks(2, [&](Communicator& c) {
    if (c.rank() == 0) {
      int x;
      std::thread aborter([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        c.Abort("test");
      });
      auto t0 = std::chrono::steady_clock::now();
      Status st = c.Recv(&x, sizeof(x), 1, 0);
      double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      aborter.join();
      EXPECT_EQ(st.code(), Code::kAborted) << st.ToString();
      EXPECT_LT(took, 10.0);  // prompt, not the default timeout (loose: loaded CI)
      EXPECT_EQ(c.Send(&x, 4, 1, 0).code(), Code::kAborted);
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));  // stay until rank 0 aborted
    }
  }, Opts());
}

TEST_P(P2P, DestroyedPeerFailsPendingRecv) {
  RunThreadRanks(2, [&](Communicator& c) {
    int x;
    if (c.rank() == 1) {
      Status st = c.Recv(&x, sizeof(x), 0, 0, 10);
      EXPECT_EQ(st.code(), Code::kRemoteError) << st.ToString();
      EXPECT_NE(st.message().find("rank 0 closed"), std::string::npos) << st.message();
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      c.Destroy();
      EXPECT_EQ(c.Send(&x, 4, 1, 0).code(), Code::kInvalidUsage);
    }
  }, Opts());
}

// An idle communicator does not burn CPU: its progress thread naps (and, with lazy connection,
// so does the thread that watches for connection requests).
void CheckIdleCpu(const CommOptions& opts) {
  RunThreadRanks(4, [](Communicator& c) {
    int x = 0;
    // One exchange first, so the engine has been busy, then everyone sits idle.
    Status st = c.rank() % 2 == 0 ? c.Send(&x, 4, c.rank() + 1) : c.Recv(&x, 4, c.rank() - 1);
    ASSERT_TRUE(st.ok()) << st.ToString();
    auto cpu = [] {
      timespec ts;
      clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
      return ts.tv_sec + ts.tv_nsec * 1e-9;
    };
    double c0 = cpu();
    std::this_thread::sleep_for(std::chrono::seconds(1));
    double used = cpu() - c0;
    // The whole process (4 ranks, each with its progress thread): far below one core.
    EXPECT_LT(used, 0.2) << "CPU seconds used by idle communicators in 1 s";
  }, opts);
}

TEST(P2PIdle, IdleCommunicatorsUseAlmostNoCpu) { CheckIdleCpu({}); }

TEST(P2PIdle, IdleLazyCommunicatorsUseAlmostNoCpu) {
  CommOptions o;
  o.lazy_connect = true;
  CheckIdleCpu(o);
}

INSTANTIATE_TEST_SUITE_P(Transports, P2P, ::testing::Values("shm", "shm+cma", "shm+copies", "tcp", "shm+lazy", "tcp+lazy"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& ch : name)
                             if (ch == '+') ch = '_';
                           return name;
                         });

}  // namespace
}  // namespace tutti::testing
