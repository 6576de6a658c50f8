// The F16C block conversions against the portable ones of narrow_float.h, on every float16
// pattern and every float.
#include "kernels/cpu/f16c.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "kernels/narrow_float.h"

namespace tutti::kernels::cpu {
namespace {

class F16C : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HasF16C()) GTEST_SKIP() << "this CPU has no AVX2/F16C";
  }
};

TEST_F(F16C, EveryHalfWidensToTheSameFloat) {
  std::vector<uint16_t> src(1 << 16);
  for (uint32_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint16_t>(i);
  std::vector<float> got(src.size());
  HalfToFloatF16C(got.data(), src.data(), src.size());
  for (uint32_t i = 0; i < src.size(); ++i) {
    const float want = Float16::FromBits(i).ToFloat();
    if (want != want) {  // NaN: F16C may quiet it; rounding back gives the same half anyway
      ASSERT_NE(got[i], got[i]) << std::hex << i;
      ASSERT_EQ(Float16::FromFloat(got[i]).bits, Float16::FromFloat(want).bits) << std::hex << i;
    } else {
      ASSERT_EQ(std::memcmp(&got[i], &want, 4), 0) << std::hex << i;
    }
  }
}

// All 2^32 floats, in blocks (a few seconds; the portable encoder vectorises too).
TEST_F(F16C, EveryFloatRoundsToTheSameHalf) {
  constexpr size_t kBlock = size_t{1} << 16;
  std::vector<uint32_t> bits(kBlock);
  std::vector<float> src(kBlock);
  std::vector<uint16_t> got(kBlock), want(kBlock);
  for (uint64_t base = 0; base < (uint64_t{1} << 32); base += kBlock) {
    for (size_t i = 0; i < kBlock; ++i) bits[i] = static_cast<uint32_t>(base + i);
    std::memcpy(src.data(), bits.data(), kBlock * 4);
    FloatToHalfF16C(got.data(), src.data(), kBlock);
    for (size_t i = 0; i < kBlock; ++i) want[i] = Float16::FromFloat(src[i]).bits;
    if (got != want) {
      for (size_t i = 0; i < kBlock; ++i) {
        ASSERT_EQ(got[i], want[i]) << "float bits 0x" << std::hex << bits[i];
      }
    }
  }
}

TEST_F(F16C, OddLengthsUseTheScalarTail) {
  const float src[11] = {1.0f,  -2.5f, 65504.0f, 65520.0f, 1e-8f, 0.1f,
                         -0.0f, 3.0f,  7.0f,     1e30f,    0.5f};
  uint16_t got[11];
  FloatToHalfF16C(got, src, 11);
  for (int i = 0; i < 11; ++i) EXPECT_EQ(got[i], Float16::FromFloat(src[i]).bits) << i;
  float back[11];
  HalfToFloatF16C(back, got, 11);
  for (int i = 0; i < 11; ++i) EXPECT_EQ(back[i], Float16::FromBits(got[i]).ToFloat()) << i;
}

}  // namespace
}  // namespace tutti::kernels::cpu
