#include "transport/frame.h"

#include <gtest/gtest.h>

namespace tutti {
namespace {

FrameHeader H(FrameType t, uint64_t arg, uint64_t len) {
  FrameHeader h;
  h.type = t;
  h.arg = arg;
  h.payload_len = len;
  return h;
}

TEST(Frame, ValidHeaders) {
  EXPECT_TRUE(ValidateFrameHeader(H(FrameType::kData, 8, 8), 1024).ok());
  EXPECT_TRUE(ValidateFrameHeader(H(FrameType::kData, 0, 0), 1024).ok());
  EXPECT_TRUE(ValidateFrameHeader(H(FrameType::kBulk, 4096, 1024), 1024).ok());
  EXPECT_TRUE(ValidateFrameHeader(H(FrameType::kRts, 1 << 30, 24), 1024).ok());
  EXPECT_TRUE(ValidateFrameHeader(H(FrameType::kAck, 0, 0), 1024).ok());
  EXPECT_TRUE(ValidateFrameHeader(H(FrameType::kPost, 8, 8), 1024).ok());
  EXPECT_TRUE(ValidateFrameHeader(H(FrameType::kCredit, 1 << 20, 0), 1024).ok());
}

TEST(Frame, RejectsHostileHeaders) {
  FrameHeader bad = H(FrameType::kData, 8, 8);
  bad.magic = 0xdeadbeef;
  EXPECT_EQ(ValidateFrameHeader(bad, 1024).code(), Code::kProtocol);
  EXPECT_EQ(ValidateFrameHeader(H(FrameType::kData, 1u << 31, 1u << 31), 1024).code(), Code::kProtocol);
  EXPECT_EQ(ValidateFrameHeader(H(FrameType::kData, 8, 16), 1024).code(), Code::kProtocol);
  EXPECT_EQ(ValidateFrameHeader(H(FrameType::kBulk, 0, 1025), 1024).code(), Code::kProtocol);
  EXPECT_EQ(ValidateFrameHeader(H(FrameType::kRts, 8, 4096), 1 << 20).code(), Code::kProtocol);
  EXPECT_EQ(ValidateFrameHeader(H(FrameType::kAck, 0, 1), 1024).code(), Code::kProtocol);
  EXPECT_EQ(ValidateFrameHeader(H(FrameType::kPost, 8, 16), 1024).code(), Code::kProtocol);
  EXPECT_EQ(ValidateFrameHeader(H(FrameType::kPost, 2048, 2048), 1024).code(), Code::kProtocol);
  EXPECT_EQ(ValidateFrameHeader(H(FrameType::kCredit, 8, 8), 1024).code(), Code::kProtocol);
  EXPECT_TRUE(ValidateFrameHeader(H(FrameType::kClose, 0, 100), 1024).ok());
  EXPECT_EQ(ValidateFrameHeader(H(FrameType::kClose, 0, 1 << 20), 1 << 30).code(), Code::kProtocol);
  FrameHeader unknown = H(FrameType::kAck, 0, 0);
  unknown.type = static_cast<FrameType>(99);
  EXPECT_EQ(ValidateFrameHeader(unknown, 1024).code(), Code::kProtocol);
}

}  // namespace
}  // namespace tutti
