// Collectives through the shared slots of a single-host communicator (core/coll/slot_run.h):
// many calls in flight at once (more rounds than slots), waited in any order and mixed with
// calls that go as messages; an input overlapping the output; a rank that never comes; a rank
// that calls something else; and forcing the slots where there are none.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

#include "tests/harness/thread_ranks.h"

namespace tutti::testing {
namespace {

CommOptions Shm(double timeout_s = 60) {
  CommOptions o;
  o.transport = "shm";
  o.timeout_s = timeout_s;
  return o;
}

TEST(Slots, ManyCallsInFlightWaitedInReverseBesideMessageCalls) {
  RunThreadRanks(3, [](Communicator& c) {
    constexpr int kCalls = 12;  // three times the slots of a rank
    const int n = c.size();
    std::vector<std::vector<int32_t>> in(kCalls), out(kCalls);
    std::vector<Work> works;
    CollOptions ring;
    ring.algorithm = "ring";
    for (int i = 0; i < kCalls; ++i) {
      const size_t count = 1 + 37 * i;
      in[i].assign(count, c.rank() + i);
      out[i].assign(count * n, -1);
      Result<Work> w = i % 5 == 4 ? c.IAllReduce(in[i].data(), out[i].data(), count, DataType::kInt32, RedOp::kSum, ring)
                       : i % 2  ? c.IAllGather(in[i].data(), out[i].data(), count, DataType::kInt32)
                                : c.IAllReduce(in[i].data(), out[i].data(), count, DataType::kInt32, RedOp::kSum);
      ASSERT_TRUE(w.ok()) << w.status().ToString();
      works.push_back(*w);
    }
    for (int i = kCalls - 1; i >= 0; --i) {
      Status st = works[i].Wait();
      ASSERT_TRUE(st.ok()) << "call " << i << ": " << st.ToString();
    }
    for (int i = 0; i < kCalls; ++i) {
      const size_t count = 1 + 37 * i;
      if (i % 2 == 1 && i % 5 != 4) {
        for (int r = 0; r < n; ++r) EXPECT_EQ(out[i][r * count + count - 1], r + i) << "call " << i;
      } else {
        EXPECT_EQ(out[i][count - 1], n * (n - 1) / 2 + n * i) << "call " << i;
      }
    }
    EXPECT_EQ(c.stats().collectives_in_flight, 0u);
  }, Shm());
}

TEST(Slots, ARankThatNeverComesIsNamedAtTheTimeout) {
  RunThreadRanks(2, [](Communicator& c) {
    float x = 1, y = 0;
    if (c.rank() == 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(900));
      Status st = c.Barrier();  // the communicator failed meanwhile
      EXPECT_FALSE(st.ok());
      return;
    }
    Status st = c.AllReduce(&x, &y, 1, DataType::kFloat32, RedOp::kSum);
    EXPECT_EQ(st.code(), Code::kTimeout) << st.ToString();
    EXPECT_NE(st.message().find("all_reduce #1 (slots"), std::string::npos) << st.ToString();
    EXPECT_NE(st.message().find("waiting for rank 1"), std::string::npos) << st.ToString();
  }, Shm(0.4));
}

TEST(Slots, ARankThatCallsSomethingElseIsNamedOnEveryRank) {
  RunThreadRanks(3, [](Communicator& c) {
    std::vector<float> in(8, 1.0f), out(24);
    Status st = c.rank() == 2 ? c.Broadcast(in.data(), out.data(), 8, DataType::kFloat32, 1)
                              : c.Broadcast(in.data(), out.data(), 8, DataType::kFloat32, 0);
    ASSERT_FALSE(st.ok());
    if (st.code() == Code::kMismatch) {
      EXPECT_NE(st.message().find("root"), std::string::npos) << st.ToString();
    } else {
      EXPECT_EQ(st.code(), Code::kRemoteError) << st.ToString();  // told by the rank that noticed
    }
    EXPECT_FALSE(c.Barrier().ok());  // the communicator failed
  }, Shm(20));
}

// An output that overlaps the input other than in place: the input is copied before any round
// is read. (Half a call apart, the first round's output lands on input that rounds written
// after it would still read.)
TEST(Slots, AnInputOverlappingTheOutputIsCopiedFirst) {
  RunThreadRanks(2, [](Communicator& c) {
    constexpr size_t kCount = 100000;  // 400 KB: 7 rounds of 64 KiB slots, 4 in flight
    constexpr size_t kShift = kCount / 2;
    std::vector<float> buf(kCount + kShift);
    for (size_t i = 0; i < kCount; ++i) buf[i] = static_cast<float>((c.rank() + 1) * (i % 1000 + 1));
    Status st = c.AllReduce(buf.data(), buf.data() + kShift, kCount, DataType::kFloat32, RedOp::kSum);
    ASSERT_TRUE(st.ok()) << st.ToString();
    for (size_t i = 0; i < kCount; ++i)
      ASSERT_EQ(buf[i + kShift], 3.0f * static_cast<float>(i % 1000 + 1)) << "element " << i;
  }, Shm());
}

TEST(Slots, AskingForSlotsWithoutThemIsRefused) {
  CommOptions tcp;
  tcp.transport = "tcp";
  RunThreadRanks(2, [](Communicator& c) {
    CollOptions o;
    o.algorithm = "slots";
    float x = 1, y = 0;
    Status st = c.AllReduce(&x, &y, 1, DataType::kFloat32, RedOp::kSum, o);
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << st.ToString();
    EXPECT_NE(st.message().find("slots"), std::string::npos) << st.ToString();
  }, tcp);
}

}  // namespace
}  // namespace tutti::testing
