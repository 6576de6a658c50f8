#include "core/coll/piece_size.h"

#include <gtest/gtest.h>

namespace tutti {
namespace {

TEST(TcpPieceBytes, BetweenHostsSmallCallsTakeSmallPieces) {
  EXPECT_EQ(TcpPieceBytes(true, 1 << 20, 1, 2), 64 << 10);
  EXPECT_EQ(TcpPieceBytes(true, 4 << 20, 4, 2), 64 << 10);
  EXPECT_EQ(TcpPieceBytes(true, (4 << 20) + 1, 1, 2), 256 << 10);
}

TEST(TcpPieceBytes, OneHostTakesLargerPiecesWhenRanksOutnumberItsCpus) {
  EXPECT_EQ(TcpPieceBytes(false, 8 << 20, 2, 2), 256 << 10);
  EXPECT_EQ(TcpPieceBytes(false, 8 << 20, 4, 2), 1 << 20);
  EXPECT_EQ(TcpPieceBytes(false, 8 << 20, 3, 4), 256 << 10);
  EXPECT_EQ(TcpPieceBytes(false, 8 << 20, 4, 0), 256 << 10);  // CPUs unknown
}

}  // namespace
}  // namespace tutti
