#include "core/p2p/frame_types.h"

#include <gtest/gtest.h>

namespace tutti {
namespace {

FrameHeader H(FrameType t, uint64_t arg, uint64_t len) {
  FrameHeader h = FrameOf(t);
  h.arg = arg;
  h.payload_len = len;
  return h;
}

TEST(FrameTypes, ValidHeaders) {
  EXPECT_TRUE(ValidateFrame(H(FrameType::kData, 8, 8), 1024).ok());
  EXPECT_TRUE(ValidateFrame(H(FrameType::kData, 0, 0), 1024).ok());
  EXPECT_TRUE(ValidateFrame(H(FrameType::kBulk, 4096, 1024), 1024).ok());
  EXPECT_TRUE(ValidateFrame(H(FrameType::kRts, 1 << 30, 24), 1024).ok());
  EXPECT_TRUE(ValidateFrame(H(FrameType::kAck, 0, 0), 1024).ok());
  EXPECT_TRUE(ValidateFrame(H(FrameType::kPost, 8, 8), 1024).ok());
  EXPECT_TRUE(ValidateFrame(H(FrameType::kCredit, 1 << 20, 0), 1024).ok());
  EXPECT_TRUE(ValidateFrame(H(FrameType::kClose, 0, 100), 1024).ok());
}

TEST(FrameTypes, OnlyBulkFramesCarryTheBulkFlag) {
  EXPECT_EQ(FrameOf(FrameType::kBulk).flags, kFrameBulk);
  EXPECT_EQ(FrameOf(FrameType::kData).flags, 0);
  FrameHeader plain_bulk = H(FrameType::kBulk, 0, 8);
  plain_bulk.flags = 0;
  EXPECT_EQ(ValidateFrame(plain_bulk, 1024).code(), Code::kProtocol);
  FrameHeader bulk_data = H(FrameType::kData, 8, 8);
  bulk_data.flags = kFrameBulk;
  EXPECT_EQ(ValidateFrame(bulk_data, 1024).code(), Code::kProtocol);
}

TEST(FrameTypes, RejectsHostileHeaders) {
  FrameHeader bad = H(FrameType::kData, 8, 8);
  bad.magic = 0xdeadbeef;
  EXPECT_EQ(ValidateFrame(bad, 1024).code(), Code::kProtocol);
  EXPECT_EQ(ValidateFrame(H(FrameType::kData, 1u << 31, 1u << 31), 1024).code(), Code::kProtocol);
  EXPECT_EQ(ValidateFrame(H(FrameType::kData, 8, 16), 1024).code(), Code::kProtocol);
  EXPECT_EQ(ValidateFrame(H(FrameType::kBulk, 0, 1025), 1024).code(), Code::kProtocol);
  EXPECT_EQ(ValidateFrame(H(FrameType::kRts, 8, 4096), 1 << 20).code(), Code::kProtocol);
  EXPECT_EQ(ValidateFrame(H(FrameType::kAck, 0, 1), 1024).code(), Code::kProtocol);
  EXPECT_EQ(ValidateFrame(H(FrameType::kPost, 8, 16), 1024).code(), Code::kProtocol);
  EXPECT_EQ(ValidateFrame(H(FrameType::kPost, 2048, 2048), 1024).code(), Code::kProtocol);
  EXPECT_EQ(ValidateFrame(H(FrameType::kCredit, 8, 8), 1024).code(), Code::kProtocol);
  EXPECT_EQ(ValidateFrame(H(FrameType::kClose, 0, 1 << 20), 1 << 30).code(), Code::kProtocol);
  FrameHeader unknown = H(FrameType::kAck, 0, 0);
  unknown.type = 99;
  EXPECT_EQ(ValidateFrame(unknown, 1024).code(), Code::kProtocol);
  unknown.type = 0;
  EXPECT_EQ(ValidateFrame(unknown, 1024).code(), Code::kProtocol);
}

}  // namespace
}  // namespace tutti
