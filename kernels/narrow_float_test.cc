// Exhaustive checks of the narrow float formats against the independent reference in
// float_reference.h: every bit pattern decodes to the formula's value, every non-NaN pattern
// survives a round trip, and encoding matches a nearest-value search on every rounding case.
#include "kernels/narrow_float.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "kernels/float_reference.h"

namespace tutti::kernels {
namespace {

using testing::Format;
using testing::RefDecode;
using testing::RefEncoder;
using testing::RefIsNaN;

uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float FromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

template <class S>
Format FormatOf() {
  return Format{S::kExponentBits, S::kMantissaBits, S::kFiniteOnlyFormat};
}

template <class S>
class NarrowFloatTest : public ::testing::Test {};
using Formats = ::testing::Types<Float16, BFloat16, Fp8E4M3, Fp8E5M2>;
TYPED_TEST_SUITE(NarrowFloatTest, Formats);

TYPED_TEST(NarrowFloatTest, EveryPatternDecodesToTheFormulaValue) {
  using S = TypeParam;
  const Format f = FormatOf<S>();
  for (uint32_t c = 0; c < (1u << f.bits()); ++c) {
    const float got = S::FromBits(c).ToFloat();
    const double want = RefDecode(f, c);
    if (RefIsNaN(f, c)) {
      ASSERT_TRUE(std::isnan(got)) << std::hex << c;
      ASSERT_EQ(std::signbit(got), (c & f.sign_bit()) != 0) << std::hex << c;
    } else {
      ASSERT_EQ(static_cast<double>(static_cast<float>(want)), want) << "not exact in float";
      ASSERT_EQ(Bits(got), Bits(static_cast<float>(want))) << std::hex << "code " << c;
    }
  }
}

TYPED_TEST(NarrowFloatTest, EveryPatternRoundTrips) {
  using S = TypeParam;
  const Format f = FormatOf<S>();
  for (uint32_t c = 0; c < (1u << f.bits()); ++c) {
    const uint32_t back = S::FromFloat(S::FromBits(c).ToFloat()).bits;
    if (RefIsNaN(f, c)) {
      ASSERT_TRUE(RefIsNaN(f, back)) << std::hex << c << " -> " << back;
      ASSERT_EQ(back & f.sign_bit(), c & f.sign_bit());
      // A quiet NaN (top mantissa bit set) keeps its payload exactly.
      if (!f.finite_only && ((c >> (f.m - 1)) & 1)) {
        ASSERT_EQ(back, c) << std::hex << c;
      }
    } else {
      ASSERT_EQ(back, c) << std::hex << c;
    }
  }
}

// Midpoints between every pair of adjacent values, the floats just either side of them, and the
// values themselves: the cases where rounding direction and ties matter.
TYPED_TEST(NarrowFloatTest, MidpointsAndNeighboursMatchNearestSearch) {
  using S = TypeParam;
  const Format f = FormatOf<S>();
  const RefEncoder ref(f);
  const uint32_t max_code = testing::RefMaxFiniteCode(f);
  for (uint32_t c = 0; c <= max_code; ++c) {
    const double lo = RefDecode(f, c);
    const double hi = c < max_code
                          ? RefDecode(f, c + 1)
                          : lo + std::ldexp(1.0, static_cast<int>(c >> f.m) - f.bias() - f.m);
    const float mid = static_cast<float>((lo + hi) / 2);
    ASSERT_EQ(static_cast<double>(mid), (lo + hi) / 2) << "midpoint not exact";
    const float cases[] = {static_cast<float>(lo), mid,
                           std::nextafter(mid, -std::numeric_limits<float>::infinity()),
                           std::nextafter(mid, std::numeric_limits<float>::infinity())};
    for (float x : cases) {
      for (float v : {x, -x}) {
        ASSERT_EQ(S::FromFloat(v).bits, ref(v)) << std::hexfloat << v << " code " << c;
      }
    }
  }
}

// Every rounding class of every float: each exponent and sign, every value of the kept mantissa
// bits and the round bit, and several "sticky" tails below the round bit.
TYPED_TEST(NarrowFloatTest, EveryRoundingClassMatchesNearestSearch) {
  using S = TypeParam;
  const Format f = FormatOf<S>();
  const RefEncoder ref(f);
  const int low = 23 - f.m - 1;  // bits below the round bit (in the normal range of the format)
  const uint32_t tails[] = {0, 1, (1u << low) - 1, 1u << (low - 1), (1u << (low - 1)) - 1};
  for (uint32_t exp = 0; exp < 256; ++exp) {
    for (uint32_t top = 0; top < (2u << f.m); ++top) {  // kept mantissa bits + round bit
      for (uint32_t tail : tails) {
        for (uint32_t sign : {0u, 1u}) {
          const uint32_t u = (sign << 31) | (exp << 23) | (top << low) | tail;
          const float x = FromBits(u);
          ASSERT_EQ(S::FromFloat(x).bits, ref(x)) << std::hex << "float bits " << u;
        }
      }
    }
  }
}

TYPED_TEST(NarrowFloatTest, RandomFloatsMatchNearestSearch) {
  using S = TypeParam;
  const Format f = FormatOf<S>();
  const RefEncoder ref(f);
  std::mt19937 rng(12345);
  for (int i = 0; i < 1 << 20; ++i) {
    // Half arbitrary bit patterns, half spread over the format's own exponent range.
    uint32_t u = rng();
    if (i & 1) {
      const int span = (1 << f.e) + f.m + 6;
      const int e = 127 - f.bias() - f.m - 3 + static_cast<int>(rng() % span);
      u = (u & 0x807fffffu) | (static_cast<uint32_t>(std::clamp(e, 0, 255)) << 23);
    }
    const float x = FromBits(u);
    ASSERT_EQ(S::FromFloat(x).bits, ref(x)) << std::hex << "float bits " << u;
  }
}

TYPED_TEST(NarrowFloatTest, NaNStaysNaNWithItsSign) {
  using S = TypeParam;
  const Format f = FormatOf<S>();
  for (uint32_t payload : {0x400000u, 0x000001u, 0x7fffffu, 0x200000u, 0x123456u}) {
    for (uint32_t sign : {0u, 0x80000000u}) {
      const float x = FromBits(sign | 0x7f800000u | payload);
      const uint32_t got = S::FromFloat(x).bits;
      EXPECT_TRUE(RefIsNaN(f, got)) << std::hex << payload;
      EXPECT_EQ(got, testing::RefNaN(f, x));
      EXPECT_EQ((got & f.sign_bit()) != 0, sign != 0);
    }
  }
}

// Doubles just off a halfway point by less than half a float ulp: rounding to float first and
// then to the format would land on the halfway point and round to even, sometimes wrongly.
TYPED_TEST(NarrowFloatTest, FromDoubleRoundsOnce) {
  using S = TypeParam;
  const Format f = FormatOf<S>();
  const RefEncoder ref(f);
  const uint32_t max_code = testing::RefMaxFiniteCode(f);
  int naive_wrong = 0;
  for (uint32_t c = 0; c < max_code; ++c) {
    const double mid = (RefDecode(f, c) + RefDecode(f, c + 1)) / 2;
    for (double rel : {0.0, 0x1p-30, -0x1p-30, 0x1p-50, -0x1p-50, 0x1p-20, -0x1p-20}) {
      for (double x : {mid * (1 + rel), -mid * (1 + rel)}) {
        ASSERT_EQ(S::FromDouble(x).bits, ref(x)) << std::hexfloat << x;
        naive_wrong += S::FromFloat(static_cast<float>(x)).bits != ref(x);
      }
    }
  }
  EXPECT_GT(naive_wrong, 0) << "the cases above do not exercise double rounding";
  std::mt19937_64 rng(7);
  for (int i = 0; i < 1 << 18; ++i) {
    uint64_t u = rng();
    const int e = 1023 - f.bias() - f.m - 3 + static_cast<int>(rng() % ((1 << f.e) + f.m + 6));
    u = (u & 0x800fffffffffffffull) | (static_cast<uint64_t>(e) << 52);
    double x;
    std::memcpy(&x, &u, 8);
    ASSERT_EQ(S::FromDouble(x).bits, ref(x)) << std::hexfloat << x;
  }
  const double inf = std::numeric_limits<double>::infinity();
  for (double x : {0.0, -0.0, 1e300, -1e300, inf, -inf, 1e-300, -1e-300}) {
    EXPECT_EQ(S::FromDouble(x).bits, ref(x)) << x;
  }
  EXPECT_TRUE(RefIsNaN(f, S::FromDouble(std::nan("")).bits));
}

TEST(NarrowFloat, KnownValues) {
  const float inf = std::numeric_limits<float>::infinity();
  // binary16
  EXPECT_EQ(Float16::FromFloat(1.0f).bits, 0x3C00);
  EXPECT_EQ(Float16::FromFloat(-2.0f).bits, 0xC000);
  EXPECT_EQ(Float16::FromFloat(65504.0f).bits, 0x7BFF);
  EXPECT_EQ(Float16::FromFloat(65519.99f).bits, 0x7BFF);
  EXPECT_EQ(Float16::FromFloat(65520.0f).bits, 0x7C00);  // max + half ulp: ties to inf
  EXPECT_EQ(Float16::FromFloat(-inf).bits, 0xFC00);
  EXPECT_EQ(Float16::FromFloat(std::ldexp(1.0f, -24)).bits, 0x0001);  // smallest subnormal
  EXPECT_EQ(Float16::FromFloat(std::ldexp(1.0f, -25)).bits, 0x0000);  // tie to even (zero)
  EXPECT_EQ(Float16::FromFloat(std::ldexp(1.5f, -24)).bits, 0x0002);  // tie to even (two)
  EXPECT_EQ(Float16::FromFloat(std::ldexp(1.0f, -14)).bits, 0x0400);  // smallest normal
  EXPECT_EQ(Float16::FromFloat(-0.0f).bits, 0x8000);
  EXPECT_EQ(Float16::FromBits(0x3555).ToFloat(), 0x1.554p-2f);
  // bfloat16
  EXPECT_EQ(BFloat16::FromFloat(1.0f).bits, 0x3F80);
  EXPECT_EQ(BFloat16::FromFloat(FromBits(0x3F808000)).bits, 0x3F80);  // tie, even stays
  EXPECT_EQ(BFloat16::FromFloat(FromBits(0x3F818000)).bits, 0x3F82);  // tie, odd rounds up
  EXPECT_EQ(BFloat16::FromFloat(FromBits(0x7F7FFFFF)).bits, 0x7F80);  // FLT_MAX -> inf
  EXPECT_EQ(BFloat16::FromFloat(FromBits(0x00000001)).bits, 0x0000);  // tiny float subnormal
  EXPECT_EQ(BFloat16::FromFloat(FromBits(0x00018000)).bits, 0x0002);
  // e4m3: saturating, one NaN per sign
  EXPECT_EQ(Fp8E4M3::FromFloat(448.0f).bits, 0x7E);
  EXPECT_EQ(Fp8E4M3::FromFloat(464.0f).bits, 0x7E);
  EXPECT_EQ(Fp8E4M3::FromFloat(1e30f).bits, 0x7E);
  EXPECT_EQ(Fp8E4M3::FromFloat(inf).bits, 0x7E);
  EXPECT_EQ(Fp8E4M3::FromFloat(-inf).bits, 0xFE);
  EXPECT_EQ(Fp8E4M3::FromFloat(std::nanf("")).bits, 0x7F);
  EXPECT_EQ(Fp8E4M3::FromFloat(1.0f).bits, 0x38);
  EXPECT_EQ(Fp8E4M3::FromFloat(std::ldexp(1.0f, -9)).bits, 0x01);
  EXPECT_EQ(Fp8E4M3::FromBits(0x7E).ToFloat(), 448.0f);
  EXPECT_EQ(Fp8E4M3::FromBits(0x78).ToFloat(), 256.0f);  // exponent 15 is finite here
  EXPECT_TRUE(std::isnan(Fp8E4M3::FromBits(0xFF).ToFloat()));
  // e5m2: IEEE-like
  EXPECT_EQ(Fp8E5M2::FromFloat(57344.0f).bits, 0x7B);
  EXPECT_EQ(Fp8E5M2::FromFloat(61439.0f).bits, 0x7B);
  EXPECT_EQ(Fp8E5M2::FromFloat(61440.0f).bits, 0x7C);
  EXPECT_EQ(Fp8E5M2::FromFloat(-inf).bits, 0xFC);
  EXPECT_EQ(Fp8E5M2::FromFloat(std::ldexp(1.0f, -16)).bits, 0x01);
  EXPECT_EQ(Fp8E5M2::FromBits(0x7C).ToFloat(), inf);
  EXPECT_TRUE(std::isnan(Fp8E5M2::FromBits(0x7D).ToFloat()));
}

}  // namespace
}  // namespace tutti::kernels
