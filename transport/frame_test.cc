#include "transport/frame.h"

#include <gtest/gtest.h>

namespace tutti {
namespace {

FrameHeader H(uint8_t type, uint64_t len, uint8_t flags = 0) {
  FrameHeader h;
  h.type = type;
  h.flags = flags;
  h.payload_len = len;
  return h;
}

TEST(Frame, AnEnvelopeWithinTheLimitPasses) {
  EXPECT_TRUE(ValidateEnvelope(H(1, 0), 1024).ok());
  EXPECT_TRUE(ValidateEnvelope(H(1, 1024), 1024).ok());
  EXPECT_TRUE(ValidateEnvelope(H(4, 1024, kFrameBulk), 1024).ok());
  // The type is the protocol's: any value passes here.
  EXPECT_TRUE(ValidateEnvelope(H(99, 8), 1024).ok());
}

TEST(Frame, RejectsHostileEnvelopes) {
  FrameHeader bad = H(1, 8);
  bad.magic = 0xdeadbeef;
  EXPECT_EQ(ValidateEnvelope(bad, 1024).code(), Code::kProtocol);
  EXPECT_EQ(ValidateEnvelope(H(1, 1025), 1024).code(), Code::kProtocol);
  EXPECT_EQ(ValidateEnvelope(H(1, 1ull << 62), ~0ull >> 1).code(), Code::kOk);
  EXPECT_EQ(ValidateEnvelope(H(1, ~0ull), ~0ull >> 1).code(), Code::kProtocol);
  EXPECT_EQ(ValidateEnvelope(H(1, 8, 2), 1024).code(), Code::kProtocol);
  EXPECT_EQ(ValidateEnvelope(H(1, 8, 0x80 | kFrameBulk), 1024).code(), Code::kProtocol);
}

}  // namespace
}  // namespace tutti
