// Collectives through the shared slots of a single-host communicator (core/coll/slot_run.h):
// many calls in flight at once (more rounds than slots), waited in any order and mixed with
// calls that go as messages; an input overlapping the output; a rank that never comes; a rank
// that calls something else; forcing the slots where there are none; which calls read their blocks
// straight from the writers' buffers.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <thread>
#include <vector>

#include "core/coll/selector.h"
#include "core/p2p/engine.h"
#include "core/store/in_memory_store.h"
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
  // Rank 2 reads rank 1's slot as the root's and finds that rank 1 called another root; rank 0
  // (the root in its view) waits for no one and rank 1 reads rank 0 fine: they learn it from
  // the next call (rank 2 marked the area failed).
  RunThreadRanks(3, [](Communicator& c) {
    std::vector<float> in(8, 1.0f), out(24);
    Status st = c.rank() == 2 ? c.Broadcast(in.data(), out.data(), 8, DataType::kFloat32, 1)
                              : c.Broadcast(in.data(), out.data(), 8, DataType::kFloat32, 0);
    if (c.rank() == 2) {
      EXPECT_EQ(st.code(), Code::kMismatch) << st.ToString();
      EXPECT_NE(st.message().find("root 0"), std::string::npos) << st.ToString();
      EXPECT_NE(st.message().find("rank 1 called"), std::string::npos) << st.ToString();
    } else if (st.ok()) {
      st = c.Barrier();
    }
    ASSERT_FALSE(st.ok());
    if (c.rank() != 2) {
      EXPECT_EQ(st.code(), Code::kRemoteError) << st.ToString();  // told by the rank that noticed
      EXPECT_NE(st.message().find("rank 2"), std::string::npos) << st.ToString();
    }
    EXPECT_FALSE(c.Barrier().ok());  // the communicator failed
  }, Shm(20));
}

TEST(Slots, WithStrictChecksEveryRankFailsTheMismatchedCallItself) {
  CommOptions o = Shm(20);
  o.strict_checks = true;
  RunThreadRanks(3, [](Communicator& c) {
    std::vector<float> in(8, 1.0f), out(24);
    Status st = c.rank() == 2 ? c.Broadcast(in.data(), out.data(), 8, DataType::kFloat32, 1)
                              : c.Broadcast(in.data(), out.data(), 8, DataType::kFloat32, 0);
    ASSERT_FALSE(st.ok()) << "rank " << c.rank();
    EXPECT_TRUE(st.code() == Code::kMismatch || st.code() == Code::kRemoteError) << st.ToString();
  }, o);
}

// Rank 0's TUTTI_STRICT_CHECKS holds for every rank (ranks that disagreed would give calls of
// count 0 different rounds): with it on rank 0 only, calls that do not meet still fail at once.
TEST(Slots, RankZerosStrictSettingHoldsForAll) {
  auto store = std::make_shared<InMemoryStore>();
  std::vector<std::thread> ranks;
  for (int r = 0; r < 2; ++r) {
    ranks.emplace_back([&, r] {
      CommOptions o = Shm(20);
      o.strict_checks = r == 0;
      auto comm = Communicator::Create(store, r, 2, o);
      ASSERT_TRUE(comm.ok()) << comm.status().ToString();
      Communicator& c = **comm;
      std::vector<float> in(8, 1.0f), out(8);
      ASSERT_TRUE(c.AllGather(in.data(), out.data(), 0, DataType::kFloat32).ok());  // one round each
      Status st = r == 0 ? c.Broadcast(in.data(), out.data(), 8, DataType::kFloat32, 0)
                         : c.Reduce(in.data(), out.data(), 8, DataType::kFloat32, RedOp::kSum, 0);
      EXPECT_FALSE(st.ok()) << "rank " << r;
      EXPECT_TRUE(st.code() == Code::kMismatch || st.code() == Code::kRemoteError) << st.ToString();
    });
  }
  for (auto& t : ranks) t.join();
}

// An all_gather, gather, scatter or all_to_all whose blocks go one-sidedly (above the eager limit, where
// rank 0 reads copies so and every rank has a CPU) leaves the slots for messages, on rank 0's
// setting: rank 1, which reads nothing one-sidedly itself, goes the same way (else the call
// would pair slots with messages and fail). A plan is made only for calls that go as messages.
TEST(Slots, LargeCopyBlocksGoAsMessagesOnRankZerosSetting) {
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "one CPU: the slots take every call";
  auto store = std::make_shared<InMemoryStore>();
  std::vector<std::thread> ranks;
  for (int r = 0; r < 2; ++r) {
    ranks.emplace_back([&, r] {
      CommOptions o = Shm(20);
      o.shm_cma = r == 0;
      o.eager_limit = 64 << 10;
      auto comm = Communicator::Create(store, r, 2, o);
      ASSERT_TRUE(comm.ok()) << comm.status().ToString();
      Communicator& c = **comm;
      for (size_t block : {size_t{16} << 10, size_t{256} << 10}) {  // slots, messages
        const size_t n = block / sizeof(float);
        std::vector<float> in(n, static_cast<float>(r + 1)), out(2 * n, -1.0f);
        Status st = c.AllGather(in.data(), out.data(), n, DataType::kFloat32);
        ASSERT_TRUE(st.ok()) << "rank " << r << ": " << st.ToString();
        EXPECT_EQ(out[0], 1.0f);
        EXPECT_EQ(out[2 * n - 1], 2.0f);
        std::vector<float> all(2 * n, static_cast<float>(r + 1)), mine(n, -1.0f);
        st = c.Scatter(all.data(), mine.data(), n, DataType::kFloat32, 0);
        ASSERT_TRUE(st.ok()) << "rank " << r << ": " << st.ToString();
        EXPECT_EQ(mine[n - 1], 1.0f);
        std::vector<float> swapped(2 * n, -1.0f);
        st = c.AllToAll(all.data(), swapped.data(), n, DataType::kFloat32);
        ASSERT_TRUE(st.ok()) << "rank " << r << ": " << st.ToString();
        EXPECT_EQ(swapped[2 * n - 1], 2.0f);
        EXPECT_EQ(c.stats().cached_plans, block > (64u << 10) ? 3u : 0u) << "rank " << r << ", blocks of " << block;
      }
      c.Destroy();
    });
  }
  for (auto& t : ranks) t.join();
}

// With more ranks than CPUs, gather, scatter and all_to_all with blocks of kSlotDirectBusyRootedMin
// and up are read straight from the writers' buffers (direct slot calls), also blocks of
// kDirectBlockMin, which messages would read one-sidedly otherwise; broadcasts from
// kSlotDirectBusyBroadcastMin; all_gather copies through the slots (there its messages and direct
// reads were slower). No call goes as messages.
TEST(Slots, WithMoreRanksThanCpusAllGatherStaysInTheSlotsAndTheOthersReadDirectly) {
  if (sysconf(_SC_NPROCESSORS_ONLN) >= 3) GTEST_SKIP() << "3 ranks must outnumber the CPUs";
  CommOptions o = Shm(60);
  o.shm_cma = true;
  RunThreadRanks(3, [](Communicator& c) {
    const int n = c.size(), me = c.rank();
    size_t direct = 0;
    for (size_t block : {size_t{kSlotDirectBusyRootedMin}, size_t{kDirectBlockMin}}) {
      const size_t count = block / sizeof(int32_t);
      std::vector<int32_t> in(n * count), out(n * count, -1);
      for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<int32_t>(me * 1000003 + i);
      ASSERT_TRUE(c.AllGather(in.data(), out.data(), count, DataType::kInt32).ok());
      EXPECT_EQ(out[(n - 1) * count], (n - 1) * 1000003);
      EXPECT_EQ(c.stats().direct_slot_calls, direct) << "rank " << me << ": all_gather, blocks of " << block;
      ASSERT_TRUE(c.Gather(in.data(), out.data(), count, DataType::kInt32, 1).ok());
      if (me == 1) {
        EXPECT_EQ(out[2 * count + 5], 2 * 1000003 + 5);
      }
      ASSERT_TRUE(c.Scatter(in.data(), out.data(), count, DataType::kInt32, 2).ok());
      EXPECT_EQ(out[count - 1], static_cast<int32_t>(2 * 1000003 + me * count + count - 1));
      ASSERT_TRUE(c.AllToAll(in.data(), out.data(), count, DataType::kInt32).ok());
      EXPECT_EQ(out[(n - 1) * count], static_cast<int32_t>((n - 1) * 1000003 + me * count));
      ASSERT_TRUE(c.Broadcast(in.data(), out.data(), count, DataType::kInt32, 2).ok());
      EXPECT_EQ(out[count - 1], static_cast<int32_t>(2 * 1000003 + count - 1));
      direct += block >= kSlotDirectBusyBroadcastMin ? 4 : 3;
      EXPECT_EQ(c.stats().direct_slot_calls, direct) << "rank " << me << ", blocks of " << block;
      EXPECT_EQ(c.stats().cached_plans, 0u) << "rank " << me << ", blocks of " << block;
    }
  }, o);
}

// Where each rank has a CPU, all_gather and all_to_all from kSlotDirectMin and gather, scatter and
// broadcast from kSlotDirectRootedMin are direct slot calls, whatever their size (but gather from
// kSplitCopyMin): every block arrives, in place too (an in-place all_to_all reads a private copy
// of the input: its peers read the blocks it writes), and nothing else goes as messages. Below
// those sizes the calls copy through the slots.
TEST(Slots, BlocksFromTheDirectSizesAreReadStraightFromTheWritersBuffers) {
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "one CPU: two ranks outnumber it";
  CommOptions o = Shm(60);
  o.shm_cma = true;
  RunThreadRanks(2, [](Communicator& c) {
    const int n = c.size(), me = c.rank();
    auto value = [&](int r, size_t i) { return static_cast<int32_t>(r * 1000003 + i); };
    size_t direct = 0;
    for (size_t block : {kSlotDirectMin - 4, kSlotDirectMin, kSlotDirectRootedMin, kSplitCopyMin, kCopyReadMax + 64}) {
      const size_t count = block / sizeof(int32_t);
      std::vector<int32_t> in(n * count), out(n * count, -1);
      for (size_t i = 0; i < in.size(); ++i) in[i] = value(me, i);
      ASSERT_TRUE(c.AllGather(in.data(), out.data(), count, DataType::kInt32).ok());
      EXPECT_EQ(out[count + count - 1], value(1, count - 1));
      ASSERT_TRUE(c.AllToAll(in.data(), out.data(), count, DataType::kInt32).ok());
      EXPECT_EQ(out[count + 7], value(1, me * count + 7));
      std::vector<int32_t> both(in);  // in place: rank r's block r is its input
      ASSERT_TRUE(c.AllGather(both.data() + me * count, both.data(), count, DataType::kInt32).ok());
      EXPECT_EQ(both[(1 - me) * count + 3], value(1 - me, (1 - me) * count + 3));
      ASSERT_TRUE(c.AllToAll(both.data(), both.data(), count, DataType::kInt32).ok());
      direct += block >= kSlotDirectMin ? 4 : 0;
      EXPECT_EQ(c.stats().direct_slot_calls, direct) << "rank " << me << ", blocks of " << block;
      const std::vector<int32_t> swapped = both;
      std::vector<int32_t> expect(n * count);
      for (int r = 0; r < n; ++r)
        for (size_t i = 0; i < count; ++i) expect[r * count + i] = value(r, r * count + i);
      ASSERT_TRUE(c.AllToAll(expect.data(), both.data(), count, DataType::kInt32).ok());
      EXPECT_EQ(swapped, both) << "rank " << me << ": in-place all_to_all, blocks of " << block;
      ASSERT_TRUE(c.Gather(in.data(), out.data(), count, DataType::kInt32, 1).ok());
      if (me == 1) {
        EXPECT_EQ(out[count - 1], value(0, count - 1));
      }
      ASSERT_TRUE(c.Scatter(in.data(), out.data(), count, DataType::kInt32, 0).ok());
      EXPECT_EQ(out[count - 1], value(0, me * count + count - 1));
      ASSERT_TRUE(c.Broadcast(in.data(), out.data(), count, DataType::kInt32, 1).ok());
      EXPECT_EQ(out[count - 1], value(1, count - 1));
      const bool gather_direct = block >= kSlotDirectRootedMin && block < kSplitCopyMin;
      direct += (block >= kSlotDirectMin ? 1 : 0) + (block >= kSlotDirectRootedMin ? 2 : 0) + (gather_direct ? 1 : 0);
      EXPECT_EQ(c.stats().direct_slot_calls, direct) << "rank " << me << ", blocks of " << block;
      // (A gather from kSplitCopyMin up goes as messages: one plan per block size.)
      EXPECT_EQ(c.stats().cached_plans, block >= kSplitCopyMin ? (block == kSplitCopyMin ? 1u : 2u) : 0u)
          << "rank " << me << ", blocks of " << block;
    }
  }, o);
}

// Calls in which two ranks do not look at each other's slots (a broadcast's root and a reduce's
// non-root; an empty call) are compared at the next call that connects them, which names the
// calls in between.
TEST(Slots, CallsThatDivergedWithoutMeetingAreNamedAtTheNextCall) {
  RunThreadRanks(2, [](Communicator& c) {
    std::vector<float> in(8, 1.0f), out(8);
    // #1 matches and is compared (an all_reduce); #2 and #3 are not compared.
    ASSERT_TRUE(c.AllReduce(in.data(), out.data(), 8, DataType::kFloat32, RedOp::kSum).ok());
    ASSERT_TRUE(c.AllGather(in.data(), out.data(), 0, DataType::kFloat32).ok());
    Status st = c.rank() == 0 ? c.Broadcast(in.data(), out.data(), 8, DataType::kFloat32, 0)
                              : c.Reduce(in.data(), out.data(), 8, DataType::kFloat32, RedOp::kSum, 0);
    ASSERT_TRUE(st.ok()) << st.ToString();
    st = c.AllReduce(in.data(), out.data(), 8, DataType::kFloat32, RedOp::kSum);
    EXPECT_EQ(st.code(), Code::kMismatch) << st.ToString();
    EXPECT_NE(st.message().find("all_reduce #4"), std::string::npos) << st.ToString();
    EXPECT_NE(st.message().find("last compared their calls at #1"), std::string::npos) << st.ToString();
    EXPECT_NE(st.message().find("one of calls #2 to #3"), std::string::npos) << st.ToString();
    EXPECT_NE(st.message().find("rank " + std::to_string(1 - c.rank())), std::string::npos) << st.ToString();
  }, Shm(20));
}

// Roots run up to a slot depth of calls ahead of readers that are slow to come; every reader
// still gets every call's data, in order.
TEST(Slots, RootsRunAheadOfSlowReaders) {
  RunThreadRanks(3, [](Communicator& c) {
    const int n = c.size(), me = c.rank();
    for (int i = 0; i < 40; ++i) {
      if (me == (i + 1) % n && i % 7 == 3) std::this_thread::sleep_for(std::chrono::milliseconds(2));
      const int root = i % n;
      const size_t count = 1 + (i * 13) % 50;
      std::vector<int32_t> in(count * n), out(count * n, -1);
      for (size_t k = 0; k < in.size(); ++k) in[k] = static_cast<int32_t>(1000 * i + 10 * me + k);
      Status st;
      switch (i % 4) {
        case 0: st = c.Broadcast(in.data(), out.data(), count, DataType::kInt32, root); break;
        case 1: st = c.Reduce(in.data(), out.data(), count, DataType::kInt32, RedOp::kSum, root); break;
        case 2: st = c.Gather(in.data(), out.data(), count, DataType::kInt32, root); break;
        default: st = c.Scatter(in.data(), out.data(), count, DataType::kInt32, root); break;
      }
      ASSERT_TRUE(st.ok()) << "call " << i << ": " << st.ToString();
      for (size_t k = 0; k < count; ++k) {
        const int32_t base = 1000 * i + static_cast<int32_t>(k);
        switch (i % 4) {
          case 0: ASSERT_EQ(out[k], base + 10 * root) << "call " << i; break;
          case 1:
            if (me == root) {
              ASSERT_EQ(out[k], n * base + 10 * (n * (n - 1) / 2)) << "call " << i;
            }
            break;
          case 2:
            for (int r = 0; r < n && me == root; ++r) ASSERT_EQ(out[r * count + k], base + 10 * r) << "call " << i;
            break;
          default: ASSERT_EQ(out[k], base + 10 * root + static_cast<int32_t>(me * count)) << "call " << i; break;
        }
      }
    }
    EXPECT_TRUE(c.Barrier().ok());
  }, Shm());
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
