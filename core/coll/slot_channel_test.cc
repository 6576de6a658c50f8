#include "core/coll/slot_channel.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace tutti {
namespace {

struct Area {
  explicit Area(const SlotChannel::Shape& s) : bytes(SlotChannel::AreaBytes(s)) {
    mem = static_cast<char*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64));
    std::memset(mem, 0, bytes);
    SlotChannel::Format(mem, s);
  }
  ~Area() { std::free(mem); }
  size_t bytes;
  char* mem;
};

TEST(SlotChannel, ShapeRoundTripsAndMalformedHeadersAreRefused) {
  SlotChannel::Shape s{3, 4, 1024};
  Area a(s);
  auto back = SlotChannel::ReadShape(a.mem, a.bytes);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->nranks, 3);
  EXPECT_EQ(back->depth, 4);
  EXPECT_EQ(back->slot_bytes, 1024u);
  EXPECT_FALSE(SlotChannel::ReadShape(a.mem, a.bytes - 64).ok());  // size disagrees
  a.mem[0] ^= 1;
  auto bad = SlotChannel::ReadShape(a.mem, a.bytes);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("malformed"), std::string::npos) << bad.status().message();
}

TEST(SlotChannel, RoundsPublishAndFinishInOrderWithFlowControl) {
  SlotChannel::Shape s{2, 2, 64};
  Area a(s);
  SlotChannel r0(a.mem, s, 0), r1(a.mem, s, 1);
  const uint32_t first = r0.Reserve(3);
  EXPECT_EQ(first, 1u);
  EXPECT_EQ(r1.Reserve(3), 1u);
  EXPECT_TRUE(r0.Writable(1));
  EXPECT_TRUE(r0.Writable(2));
  EXPECT_FALSE(r0.Writable(3));  // round 1 is not finished by everyone
  SlotDesc d;
  d.coll = 4;
  d.count = 7;
  std::memcpy(r0.MySlot(1), "abcdefg", 7);
  EXPECT_FALSE(r1.Arrived(0, 1));
  r0.Publish(1, d);
  ASSERT_TRUE(r1.Arrived(0, 1));
  EXPECT_EQ(std::memcmp(r1.PeerSlot(0, 1), "abcdefg", 7), 0);
  EXPECT_TRUE(r1.Desc(0, 1) == d);
  EXPECT_FALSE(r1.Arrived(0, 3));  // slot 1 says round 1, not 3
  r0.Finish(1);
  EXPECT_FALSE(r0.Writable(3));  // rank 1 has not finished round 1
  r1.Finish(1);
  EXPECT_TRUE(r0.Writable(3));
  EXPECT_EQ(r0.finished(), 1u);
  EXPECT_EQ(r0.FinishedBy(1), 1u);
  EXPECT_EQ(r1.PublishedBy(0, 1), 1u);
}

TEST(SlotChannel, RoundNumbersWrapAround) {
  SlotChannel::Shape s{2, 2, 64};
  Area a(s);
  SlotChannel r0(a.mem, s, 0), r1(a.mem, s, 1);
  r0.Finish(0xffffffffu);
  r1.Finish(0xffffffffu);
  EXPECT_TRUE(r0.Writable(0));   // needs 0xfffffffe
  EXPECT_TRUE(r0.Writable(1));   // needs 0xffffffff
  EXPECT_FALSE(r0.Writable(2));  // needs 0
}

TEST(SlotChannel, TheFirstFailureIsMarkedWithItsReason) {
  SlotChannel::Shape s{3, 2, 64};
  Area a(s);
  SlotChannel r0(a.mem, s, 0), r1(a.mem, s, 1), r2(a.mem, s, 2);
  EXPECT_EQ(r0.FailedBy(), -1);
  EXPECT_EQ(r0.FailureReason(), "");
  r2.MarkFailed("rank 2: rank 1 died");
  r1.MarkFailed("rank 1: too late to count");
  EXPECT_EQ(r0.FailedBy(), 2);
  EXPECT_EQ(r0.FailureReason(), "rank 2: rank 1 died");
  r0.MarkFailed(std::string(4096, 'x'));  // a long reason from a later marker changes nothing
  EXPECT_EQ(r1.FailureReason(), "rank 2: rank 1 died");
}

TEST(SlotChannel, LongReasonsAreShortenedToTheirRoom) {
  SlotChannel::Shape s{2, 2, 64};
  Area a(s);
  SlotChannel r0(a.mem, s, 0), r1(a.mem, s, 1);
  r1.MarkFailed(std::string(4096, 'y'));
  const std::string why = r0.FailureReason();
  EXPECT_GT(why.size(), 200u);
  EXPECT_LT(why.size(), 4096u);
  EXPECT_EQ(why, std::string(why.size(), 'y'));
  EXPECT_EQ(r0.Reserve(1), 1u);  // the reason did not spill into the ranks' lines
}

// Two threads exchange many rounds through the slots, sleeping on the bell half the time: every
// value arrives intact (TSan checks the ordering) and no sleeper misses its wake-up.
TEST(SlotChannel, ThreadsExchangeRoundsAndSleepersAreWoken) {
  SlotChannel::Shape s{2, 3, 64};
  Area a(s);
  constexpr uint32_t kRounds = 20000;
  auto rank = [&](int me, std::vector<uint64_t>* got) {
    SlotChannel ch(a.mem, s, me);
    const uint32_t first = ch.Reserve(kRounds);
    auto wait = [&](auto ready) {
      for (int spins = 0; !ready(); ++spins) {
        if (spins < 100) continue;
        uint32_t seen = ch.PrepareSleep();
        if (!ready()) ch.Sleep(seen, 200000);  // a missed wake-up would cost 0.2 s per round
        ch.EndSleep();
      }
    };
    for (uint32_t i = 0; i < kRounds; ++i) {
      const uint32_t r = first + i;
      wait([&] { return ch.Writable(r); });
      uint64_t v = (uint64_t{static_cast<uint32_t>(me)} << 32) | i;
      std::memcpy(ch.MySlot(r), &v, sizeof(v));
      SlotDesc d;
      d.part = i;
      ch.Publish(r, d);
      wait([&] { return ch.Arrived(1 - me, r); });
      uint64_t w;
      std::memcpy(&w, ch.PeerSlot(1 - me, r), sizeof(w));
      EXPECT_EQ(ch.Desc(1 - me, r).part, i);
      got->push_back(w);
      ch.Finish(r);
    }
  };
  std::vector<uint64_t> got0, got1;
  const auto t0 = std::chrono::steady_clock::now();
  std::thread a0(rank, 0, &got0), a1(rank, 1, &got1);
  a0.join();
  a1.join();
  ASSERT_EQ(got0.size(), kRounds);
  ASSERT_EQ(got1.size(), kRounds);
  for (uint32_t i = 0; i < kRounds; ++i) {
    ASSERT_EQ(got0[i], (uint64_t{1} << 32) | i);
    ASSERT_EQ(got1[i], i);
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(60));
}

}  // namespace
}  // namespace tutti
