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
  SlotChannel::Shape s{3, 8, 1024, 2};
  Area a(s);
  auto back = SlotChannel::ReadShape(a.mem, a.bytes);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->nranks, 3);
  EXPECT_EQ(back->units, 8);
  EXPECT_EQ(back->unit_bytes, 1024u);
  EXPECT_EQ(back->round_units, 2);
  EXPECT_FALSE(SlotChannel::ReadShape(a.mem, a.bytes - 64).ok());  // size disagrees
  a.mem[0] ^= 1;
  auto bad = SlotChannel::ReadShape(a.mem, a.bytes);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("malformed"), std::string::npos) << bad.status().message();
}

TEST(SlotChannel, RoundsTakeTheUnitsTheirDataNeedsAndNeverWrap) {
  SlotChannel::Shape s{2, 8, 64, 4};
  Area a(s);
  SlotChannel ch(a.mem, s, 0);
  EXPECT_EQ(ch.slot_bytes(), 256u);
  auto place = [&](uint32_t pos, uint64_t bytes) {
    SlotChannel::Span sp = ch.Place(pos, bytes);
    return std::vector<uint32_t>{sp.start, sp.data, sp.end};
  };
  EXPECT_EQ(place(1, 0), (std::vector<uint32_t>{1, 1, 1}));     // a header only: one unit
  EXPECT_EQ(place(1, 64), (std::vector<uint32_t>{1, 1, 1}));
  EXPECT_EQ(place(1, 65), (std::vector<uint32_t>{1, 1, 2}));
  EXPECT_EQ(place(5, 256), (std::vector<uint32_t>{5, 8, 11}));  // 5..7 would wrap: start over at 8
  EXPECT_EQ(place(4, 256), (std::vector<uint32_t>{4, 4, 7}));   // fits exactly
  EXPECT_EQ(place(0xffffffffu, 128), (std::vector<uint32_t>{0xffffffffu, 0, 1}));  // 2^32 - 1 is unit 7
  EXPECT_EQ(ch.next_unit(), 1u);
  ch.Reserve(5);
  EXPECT_EQ(ch.next_unit(), 6u);
}

TEST(SlotChannel, RoundsPublishAndFinishInOrderWithFlowControl) {
  SlotChannel::Shape s{2, 2, 64, 1};
  Area a(s);
  SlotChannel r0(a.mem, s, 0), r1(a.mem, s, 1);
  EXPECT_EQ(r0.next_unit(), 1u);
  EXPECT_TRUE(r0.Writable(1));
  EXPECT_TRUE(r0.Writable(2));
  EXPECT_FALSE(r0.Writable(3));  // unit 1 is not finished by everyone
  SlotDesc d;
  d.coll = 4;
  d.count = 7;
  std::memcpy(r0.MySlot(1, 7), "abcdefg", 7);
  EXPECT_FALSE(r1.Arrived(0, 1));
  r0.Publish(r0.Place(1, 7), d);
  ASSERT_TRUE(r1.Arrived(0, 1));
  EXPECT_EQ(std::memcmp(r1.PeerSlot(0, 1, 7), "abcdefg", 7), 0);
  EXPECT_TRUE(r1.Desc(0, 1) == d);
  EXPECT_FALSE(r1.Arrived(0, 3));  // slot 1 says round 1, not 3
  r0.Finish(1);
  EXPECT_FALSE(r0.Writable(3));  // rank 1 has not finished round 1
  r1.Finish(1);
  EXPECT_TRUE(r0.Writable(3));
  EXPECT_EQ(r0.finished(), 1u);
  EXPECT_EQ(r0.FinishedBy(1), 1u);
  EXPECT_EQ(r1.PublishedBy(0, 1), 1u);
  // Up to kInlineBytes the data lives in the header's line, beyond in the unit.
  EXPECT_NE(r0.MySlot(3, SlotChannel::kInlineBytes), r0.MySlot(3, SlotChannel::kInlineBytes + 1));
  EXPECT_EQ(r1.PeerSlot(0, 3, SlotChannel::kInlineBytes + 1), r0.MySlot(3, SlotChannel::kInlineBytes + 1));
  EXPECT_EQ(r1.PeerSlot(0, 3, 1), r0.MySlot(3, 1));
}

// The units of a round other than its first data unit (skipped ones and the rest of its data)
// say that they are filler, so a rank that waits for a round there finds another call.
TEST(SlotChannel, ARoundsOtherUnitsAreMarkedAsFiller) {
  SlotChannel::Shape s{2, 8, 64, 4};
  Area a(s);
  SlotChannel r0(a.mem, s, 0), r1(a.mem, s, 1);
  SlotDesc d;
  d.coll = 2;
  d.count = 40;
  const SlotChannel::Span sp = r0.Place(6, 200);  // units 6, 7 skipped; data 8..11
  ASSERT_EQ(sp.data, 8u);
  r0.Publish(sp, d);
  for (uint32_t u = 6; u <= 11; ++u) {
    ASSERT_TRUE(r1.Arrived(0, u)) << "unit " << u;
    const SlotDesc got = r1.Desc(0, u);
    EXPECT_EQ(got.fill, u != 8) << "unit " << u;
    EXPECT_EQ(got.count, 40u);
  }
  EXPECT_FALSE(r1.Arrived(0, 12));
  EXPECT_FALSE(r1.Arrived(0, 5));
}

TEST(SlotChannel, RoundNumbersWrapAround) {
  SlotChannel::Shape s{2, 2, 64, 1};
  Area a(s);
  SlotChannel r0(a.mem, s, 0), r1(a.mem, s, 1);
  r0.Finish(0xffffffffu);
  r1.Finish(0xffffffffu);
  EXPECT_TRUE(r0.Writable(0));   // needs 0xfffffffe
  EXPECT_TRUE(r0.Writable(1));   // needs 0xffffffff
  EXPECT_FALSE(r0.Writable(2));  // needs 0
}

TEST(SlotChannel, TheFirstFailureIsMarkedWithItsReason) {
  SlotChannel::Shape s{3, 2, 64, 1};
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

TEST(SlotChannel, TheEarliestUnitGivenUpOnIsKept) {
  SlotChannel::Shape s{2, 8, 64, 1};
  Area a(s);
  SlotChannel r0(a.mem, s, 0), r1(a.mem, s, 1);
  EXPECT_FALSE(r0.GaveUp(1, 0xffffffffu));
  r1.GiveUp(9);
  EXPECT_FALSE(r0.GaveUp(1, 8));
  EXPECT_TRUE(r0.GaveUp(1, 9));
  EXPECT_TRUE(r0.GaveUp(1, 12));
  r1.GiveUp(12);  // later: changes nothing
  EXPECT_FALSE(r0.GaveUp(1, 8));
  r1.GiveUp(5);
  EXPECT_TRUE(r0.GaveUp(1, 5));
  EXPECT_FALSE(r0.GaveUp(1, 4));
  EXPECT_FALSE(r1.GaveUp(0, 100));
  SlotChannel::Shape w{2, 8, 64, 1};  // across the wrap of the unit counter
  Area b(w);
  SlotChannel q0(b.mem, w, 0), q1(b.mem, w, 1);
  q1.GiveUp(0xfffffffeu);
  EXPECT_TRUE(q0.GaveUp(1, 3));
  EXPECT_FALSE(q0.GaveUp(1, 0xfffffff0u));
}

TEST(SlotChannel, LongReasonsAreShortenedToTheirRoom) {
  SlotChannel::Shape s{2, 2, 64, 1};
  Area a(s);
  SlotChannel r0(a.mem, s, 0), r1(a.mem, s, 1);
  r1.MarkFailed(std::string(4096, 'y'));
  const std::string why = r0.FailureReason();
  EXPECT_GT(why.size(), 200u);
  EXPECT_LT(why.size(), 4096u);
  EXPECT_EQ(why, std::string(why.size(), 'y'));
  EXPECT_EQ(r0.FinishedBy(0), 0u);  // the reason did not spill into the ranks' lines
  EXPECT_EQ(r0.FinishedBy(1), 0u);
}

// Two threads exchange many rounds of 1 to 3 units (or data in the header) through a ring of 7 (so rounds wrap around at
// every place), sleeping on the bell half the time: every value arrives intact (TSan checks the
// ordering) and no sleeper misses its wake-up.
TEST(SlotChannel, ThreadsExchangeRoundsAndSleepersAreWoken) {
  SlotChannel::Shape s{2, 7, 64, 3};
  Area a(s);
  constexpr uint32_t kRounds = 20000;
  auto rank = [&](int me, std::vector<uint64_t>* got) {
    SlotChannel ch(a.mem, s, me);
    uint32_t pos = ch.next_unit();
    auto wait = [&](auto ready) {
      for (int spins = 0; !ready(); ++spins) {
        if (spins < 100) continue;
        uint32_t seen = ch.PrepareSleep();
        if (!ready()) ch.Sleep(seen, 200000);  // a missed wake-up would cost 0.2 s per round
        ch.EndSleep();
      }
    };
    for (uint32_t i = 0; i < kRounds; ++i) {
      const uint64_t bytes = i % 4 == 3 ? 16 : 64 * (1 + i % 3) - 8 * (i % 2);  // 16: in the header
      const SlotChannel::Span sp = ch.Place(pos, bytes);
      pos = sp.end + 1;
      wait([&] { return ch.Writable(sp.end); });
      uint64_t v = (uint64_t{static_cast<uint32_t>(me)} << 32) | i;
      std::memcpy(ch.MySlot(sp.data, bytes), &v, sizeof(v));
      std::memcpy(ch.MySlot(sp.data, bytes) + bytes - sizeof(v), &v, sizeof(v));  // the round's last word
      SlotDesc d;
      d.part = i;
      ch.Publish(sp, d);
      wait([&] { return ch.Arrived(1 - me, sp.data); });
      uint64_t w, last;
      std::memcpy(&w, ch.PeerSlot(1 - me, sp.data, bytes), sizeof(w));
      std::memcpy(&last, ch.PeerSlot(1 - me, sp.data, bytes) + bytes - sizeof(last), sizeof(last));
      EXPECT_EQ(ch.Desc(1 - me, sp.data).part, i);
      EXPECT_EQ(last, w);
      got->push_back(w);
      ch.Finish(sp.end);
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
