// Stream-ordered collectives (CollOptions::stream) and point-to-point (Send/Recv with a stream)
// on host streams: the call enqueues and returns, runs in order with other work on the stream,
// two communicators' collectives on two streams overlap, and errors surface when the stream is
// synchronized.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "core/communicator.h"
#include "core/stream/host_stream.h"
#include "tests/harness/thread_ranks.h"

namespace tutti::testing {
namespace {

TEST(Stream, CallEnqueuesAndReturnsThenRunsInStreamOrder) {
  RunThreadRanks(2, [](Communicator& c) {
    HostStream s("rank stream");
    std::atomic<bool> release{false};
    std::vector<float> buf(1000, 0.0f);
    // Stream work before the collective writes its input; the collective must not read it
    // before that work has run.
    s.Enqueue("hold", [&] {
      while (!release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      return OkStatus();
    });
    s.Enqueue("fill", [&] {
      for (auto& x : buf) x = static_cast<float>(c.rank() + 1);
      return OkStatus();
    });
    CollOptions o;
    o.stream = &s;
    ASSERT_TRUE(c.AllReduce(buf.data(), buf.data(), buf.size(), DataType::kFloat32, RedOp::kSum, o).ok());
    float seen_after = -1;
    s.Enqueue("read", [&] {
      seen_after = buf[999];
      return OkStatus();
    });
    // Returned while the stream is held: nothing has run.
    EXPECT_EQ(buf[0], 0.0f);
    EXPECT_FALSE(s.Idle());
    release = true;
    ASSERT_TRUE(s.Synchronize().ok());
    EXPECT_EQ(buf[0], 3.0f);
    EXPECT_EQ(seen_after, 3.0f);  // later stream work saw the result
  });
}

TEST(Stream, TwoCommunicatorsOnTwoStreamsOverlap) {
  RunThreadRanks(2, [](Communicator& c) {
    auto other = c.Split(0, c.rank());
    ASSERT_TRUE(other.ok()) << other.status().ToString();
    HostStream sa("a"), sb("b");
    std::atomic<bool> b_done{false};
    int a_val = c.rank() + 1, b_val = 10 * (c.rank() + 1);
    if (c.rank() == 1) {
      // Rank 1's collective on comm A waits (on stream a) for its collective on comm B:
      // rank 0 issues A first. Only independent progress of the two streams finishes both.
      sa.Enqueue("wait for b", [&] {
        for (int i = 0; i < 20000 && !b_done.load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        return b_done.load() ? OkStatus() : TimeoutError("stream b did not progress");
      });
    }
    CollOptions oa, ob;
    oa.stream = &sa;
    ob.stream = &sb;
    ASSERT_TRUE(c.AllReduce(&a_val, &a_val, 1, DataType::kInt32, RedOp::kSum, oa).ok());
    ASSERT_TRUE((*other)->AllReduce(&b_val, &b_val, 1, DataType::kInt32, RedOp::kSum, ob).ok());
    sb.Enqueue("mark", [&] {
      b_done = true;
      return OkStatus();
    });
    ASSERT_TRUE(sb.Synchronize().ok());
    ASSERT_TRUE(sa.Synchronize().ok());
    EXPECT_EQ(a_val, 3);
    EXPECT_EQ(b_val, 30);
  });
}

TEST(Stream, ErrorsSurfaceOnSynchronizeNamingTheCall) {
  RunThreadRanks(2, [](Communicator& c) {
    HostStream s("s");
    CollOptions o;
    o.stream = &s;
    int x = 1;
    // A bad root is found when the call runs; the stream reports it and skips what follows.
    ASSERT_TRUE(c.Broadcast(&x, &x, 1, DataType::kInt32, /*root=*/7, o).ok());
    bool ran = false;
    s.Enqueue("after", [&] {
      ran = true;
      return OkStatus();
    });
    Status st = s.Synchronize();
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << st.ToString();
    EXPECT_NE(st.message().find("broadcast"), std::string::npos) << st.ToString();
    EXPECT_NE(st.message().find("root 7"), std::string::npos) << st.ToString();
    EXPECT_FALSE(ran);
    // The communicator and the stream are fine afterwards.
    ASSERT_TRUE(c.AllReduce(&x, &x, 1, DataType::kInt32, RedOp::kSum, o).ok());
    ASSERT_TRUE(s.Synchronize().ok());
    EXPECT_EQ(x, 2);
    // The asynchronous forms do not take a stream.
    EXPECT_EQ(c.IBarrier(o).status().code(), Code::kInvalidArgument);
  });
}

TEST(Stream, PointToPointEnqueuesAndRunsInStreamOrder) {
  RunThreadRanks(2, [](Communicator& c) {
    HostStream s("p2p stream");
    std::atomic<bool> release{false};
    std::vector<int> buf(100000, 0);  // past the eager limit: the send needs the receiver
    s.Enqueue("hold", [&] {
      while (!release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      return OkStatus();
    });
    int seen_after = -1;
    if (c.rank() == 0) {
      s.Enqueue("fill", [&] {
        for (size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<int>(i);
        return OkStatus();
      });
      ASSERT_TRUE(c.Send(buf.data(), buf.size() * sizeof(int), 1, 4, s).ok());
    } else {
      ASSERT_TRUE(c.Recv(buf.data(), buf.size() * sizeof(int), 0, 4, s).ok());
      s.Enqueue("read", [&] {
        seen_after = buf[99999];
        return OkStatus();
      });
    }
    // Both calls returned while the streams are held: nothing moved.
    EXPECT_EQ(buf[99999], 0);
    EXPECT_FALSE(s.Idle());
    release = true;
    ASSERT_TRUE(s.Synchronize().ok());
    EXPECT_EQ(buf[99999], 99999);
    if (c.rank() == 1) EXPECT_EQ(seen_after, 99999);  // later stream work saw the data
  });
}

TEST(Stream, PointToPointErrorsSurfaceOnSynchronize) {
  RunThreadRanks(2, [](Communicator& c) {
    HostStream s("s");
    int x = 5;
    ASSERT_TRUE(c.Send(&x, sizeof(x), /*peer=*/9, 0, s).ok());  // checked when it runs
    Status st = s.Synchronize();
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << st.ToString();
    EXPECT_NE(st.message().find("rank 9"), std::string::npos) << st.ToString();
    EXPECT_NE(st.message().find("send of 4 bytes"), std::string::npos) << st.ToString();
    // A receive that no send matches ends at the communicator's timeout, reported by the stream.
    ASSERT_TRUE(c.Recv(&x, sizeof(x), 1 - c.rank(), 77, s).ok());
    st = s.Synchronize();
    EXPECT_EQ(st.code(), Code::kTimeout) << st.ToString();
    EXPECT_NE(st.message().find("recv of 4 bytes from rank"), std::string::npos) << st.ToString();
    CollOptions wait;
    wait.timeout_s = 60;  // the two timeouts may end far apart on a loaded machine
    ASSERT_TRUE(c.Barrier(wait).ok());  // neither leaves (closing its end) before both timed out
  }, [] {
    CommOptions o;
    o.timeout_s = 0.5;
    return o;
  }());
}

TEST(Stream, WorkQueuedForADestroyedCommunicatorFailsCleanly) {
  RunThreadRanks(2, [](Communicator& c) {
    auto sub = c.Split(0, c.rank());
    ASSERT_TRUE(sub.ok());
    HostStream s("s");
    std::atomic<bool> release{false};
    s.Enqueue("hold", [&] {
      while (!release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      return OkStatus();
    });
    CollOptions o;
    o.stream = &s;
    ASSERT_TRUE((*sub)->Barrier(o).ok());
    sub->reset();  // destroyed while its barrier waits in the stream
    release = true;
    Status st = s.Synchronize();
    EXPECT_EQ(st.code(), Code::kInvalidUsage) << st.ToString();
    EXPECT_NE(st.message().find("destroyed before the call ran"), std::string::npos) << st.ToString();
  });
}

}  // namespace
}  // namespace tutti::testing
