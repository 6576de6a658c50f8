#include "kernels/prims/fifo.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

namespace tutti::prims {
namespace {

TEST(Fifo, LayoutKeepsCountersAndSlotsOnTheirOwnLines) {
  EXPECT_EQ(sizeof(ConnCtl), 128u);
  EXPECT_EQ(offsetof(ConnCtl, head) - offsetof(ConnCtl, tail), 64u);
  for (uint32_t nslots : {1u, 2u, 4u, 8u, 9u}) {
    FifoGeom g{nslots, 256, Proto::kSimple};
    EXPECT_EQ(SlotsOffset(g) % 64, 0u);
    EXPECT_GE(SlotsOffset(g), SizesOffset() + 8 * nslots);
    EXPECT_EQ(ConnBytes(g), SlotsOffset(g) + nslots * 256u);
  }
  EXPECT_EQ(PieceCapacity(FifoGeom{4, 256, Proto::kSimple}), 256u);
  EXPECT_EQ(PieceCapacity(FifoGeom{4, 256, Proto::kLL}), 120u);  // 4 bytes a word, less the size and tag words
}

TEST(Fifo, LLFlagIsNeverZeroAndDiffersFromTheSlotsPreviousPiece) {
  const uint64_t wrap = uint64_t{0xffffffff};
  for (uint64_t base : {uint64_t{0}, wrap - 20, 2 * wrap - 5, (uint64_t{1} << 40) + 3}) {
    for (uint64_t s = base; s < base + 40; ++s) {
      EXPECT_NE(LLFlag(s), 0u) << s;
      for (uint64_t nslots : {1, 2, 4, 8}) {
        if (s >= nslots) {
          EXPECT_NE(LLFlag(s), LLFlag(s - nslots)) << s << " " << nslots;
        }
      }
    }
  }
  EXPECT_EQ(LLWords(0), 2u);  // the size and tag words alone
  EXPECT_EQ(LLWords(1), 3u);
  EXPECT_EQ(LLWords(4), 3u);
  EXPECT_EQ(LLWords(5), 4u);
  // The data of a full LL piece and its two head words fill the slot exactly.
  const FifoGeom ll{2, 4096, Proto::kLL};
  EXPECT_EQ(PieceCapacity(ll), 2040u);
  EXPECT_EQ(LLWords(PieceCapacity(ll)) * 8, ll.slot_bytes);
}

struct Conn {
  explicit Conn(const FifoGeom& g) : geom(g) {
    mem = static_cast<uint8_t*>(std::aligned_alloc(64, (ConnBytes(g) + 63) / 64 * 64));
    std::memset(mem, 0, ConnBytes(g));
  }
  ~Conn() { std::free(mem); }
  ConnCtl* ctl() { return reinterpret_cast<ConnCtl*>(mem); }
  FifoGeom geom;
  uint8_t* mem;
};

TEST(Fifo, LLPiecesArriveOnlyWithTheirOwnFlag) {
  Conn c(FifoGeom{2, 64, Proto::kLL});
  const Team team;
  const uint8_t data[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  for (uint64_t seq = 0; seq < 6; ++seq) {
    uint32_t bytes = 0, tag = 0;
    EXPECT_FALSE(LLHeader(c.ctl(), c.geom, seq, &bytes, &tag)) << seq;
    EXPECT_FALSE(LLArrivedPart(team, c.ctl(), c.geom, seq, 12)) << seq;
    LLPackPart(team, c.ctl(), c.geom, seq, 12, 0xc0ffee00u + static_cast<uint32_t>(seq), data);
    ASSERT_TRUE(LLHeader(c.ctl(), c.geom, seq, &bytes, &tag));
    EXPECT_EQ(bytes, 12u);  // the size and the call's tag travel with the piece
    EXPECT_EQ(tag, 0xc0ffee00u + seq);
    EXPECT_TRUE(LLArrivedPart(team, c.ctl(), c.geom, seq, 12));
    // The piece two later uses the same slot but is not there yet.
    EXPECT_FALSE(LLArrivedPart(team, c.ctl(), c.geom, seq + 2, 12));
    uint8_t got[12] = {};
    LLUnpackPart(team, c.ctl(), c.geom, seq, 12, got);
    EXPECT_EQ(std::memcmp(got, data, 12), 0);
  }
  // A piece whose last word is missing has not arrived.
  uint64_t* words = reinterpret_cast<uint64_t*>(Slot(c.ctl(), c.geom, 6));
  LLPackPart(team, c.ctl(), c.geom, 6, 12, 1, data);
  words[4] = 0;
  EXPECT_FALSE(LLArrivedPart(team, c.ctl(), c.geom, 6, 12));
  // Nor one whose tag word is missing: its header has not arrived.
  LLPackPart(team, c.ctl(), c.geom, 7, 12, 1, data);
  words = reinterpret_cast<uint64_t*>(Slot(c.ctl(), c.geom, 7));
  words[1] = 0;
  uint32_t bytes = 0, tag = 0;
  EXPECT_FALSE(LLHeader(c.ctl(), c.geom, 7, &bytes, &tag));
}

TEST(Fifo, SimpleSizeWordsCarryTheTag) {
  const uint64_t w = SizeWord(65536, 0xfedcba98u);
  EXPECT_EQ(SizeOf(w), 65536u);
  EXPECT_EQ(TagOf(w), 0xfedcba98u);
  EXPECT_EQ(SizeWord(7, 0), 7u);
}

TEST(Fifo, CreditsAndSimpleArrival) {
  Conn c(FifoGeom{2, 64, Proto::kSimple});
  EXPECT_TRUE(HasCredit(c.ctl(), c.geom, 0));
  EXPECT_TRUE(HasCredit(c.ctl(), c.geom, 1));
  EXPECT_FALSE(HasCredit(c.ctl(), c.geom, 2));  // both slots unconsumed
  EXPECT_FALSE(SimpleArrived(c.ctl(), 0));
  StoreRelease(&c.ctl()->tail, 1);
  EXPECT_TRUE(SimpleArrived(c.ctl(), 0));
  EXPECT_FALSE(SimpleArrived(c.ctl(), 1));
  StoreRelease(&c.ctl()->head, 1);
  EXPECT_TRUE(HasCredit(c.ctl(), c.geom, 2));
  EXPECT_FALSE(HasCredit(c.ctl(), c.geom, 3));
}

}  // namespace
}  // namespace tutti::prims
