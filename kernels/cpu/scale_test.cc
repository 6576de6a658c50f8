// ScaleBy and DivideBy for every type, against a scalar reference.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/cpu/reduce.h"
#include "kernels/cpu/reduce_reference.h"

namespace tutti::kernels {
namespace {

using testing::IsNarrow;
using testing::LoadBits;
using testing::LoadSigned;
using testing::StoreBits;

constexpr DataType kAllTypes[] = {DataType::kInt8,    DataType::kUint8,    DataType::kInt32,
                                  DataType::kUint32,  DataType::kInt64,    DataType::kUint64,
                                  DataType::kFloat16, DataType::kBfloat16, DataType::kFloat32,
                                  DataType::kFloat64, DataType::kFp8E4M3,  DataType::kFp8E5M2};

double ValueOf(const void* buf, size_t i, DataType t) {
  if (IsNarrow(t)) {
    return testing::RefDecode(testing::NarrowFormat(t), static_cast<uint32_t>(LoadBits(buf, i, t)));
  }
  if (t == DataType::kFloat32) {
    float f;
    std::memcpy(&f, static_cast<const char*>(buf) + 4 * i, 4);
    return f;
  }
  double d;
  std::memcpy(&d, static_cast<const char*>(buf) + 8 * i, 8);
  return d;
}

// Encodes a double as the floating-point type t, rounding once.
uint64_t EncodeFloat(double v, DataType t) {
  if (IsNarrow(t)) return testing::EncoderFor(t)(v);
  if (t == DataType::kFloat32) {
    const float f = static_cast<float>(v);
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
  }
  uint64_t u;
  std::memcpy(&u, &v, 8);
  return u;
}

std::vector<uint8_t> RandomBuffer(size_t count, DataType t, std::mt19937_64& rng) {
  std::vector<uint8_t> buf(count * DataTypeSize(t));
  for (size_t i = 0; i < count; ++i) {
    uint64_t bits = rng();
    if (IsFloatingPoint(t) && rng() % 4 != 0) {  // mostly ordinary values, sometimes raw bits
      const double v = (static_cast<double>(rng() % 20001) - 10000.0) / 64.0;
      bits = EncodeFloat(v, t);
    }
    StoreBits(buf.data(), i, t, bits);
  }
  return buf;
}

bool SameElement(const void* got, const void* want, size_t i, DataType t) {
  return testing::SameElement(got, want, i, t);
}

TEST(ScaleBy, EveryTypeAgainstReference) {
  std::mt19937_64 rng(11);
  const size_t count = 1037;
  for (DataType t : kAllTypes) {
    const std::vector<double> scalars =
        IsFloatingPoint(t) ? std::vector<double>{0.5, -3.0, 0.1, 1.0 / 3.0, 1e-3, 1e30, 0.0}
                           : std::vector<double>{3.0, -1.0, 0.0, 1.0, 7.0};
    for (double scalar : scalars) {
      if (scalar < 0 && !IsFloatingPoint(t) && !testing::IsSigned(t)) continue;
      SCOPED_TRACE(std::string(DataTypeName(t)) + " * " + std::to_string(scalar));
      const std::vector<uint8_t> src = RandomBuffer(count, t, rng);
      std::vector<uint8_t> want(src.size()), got(src.size());
      for (size_t i = 0; i < count; ++i) {
        uint64_t bits;
        if (!IsFloatingPoint(t)) {
          bits = LoadBits(src.data(), i, t) * static_cast<uint64_t>(static_cast<int64_t>(scalar));
        } else if (t == DataType::kFloat64) {
          bits = EncodeFloat(ValueOf(src.data(), i, t) * scalar, t);
        } else {
          // The scalar is rounded to float; the product (exact in double for these widths) is
          // rounded once.
          const double f = static_cast<float>(scalar);
          bits = t == DataType::kFloat32
                     ? EncodeFloat(
                           static_cast<float>(ValueOf(src.data(), i, t)) * static_cast<float>(f), t)
                     : EncodeFloat(ValueOf(src.data(), i, t) * f, t);
        }
        StoreBits(want.data(), i, t, bits);
      }
      ASSERT_TRUE(ScaleBy(got.data(), src.data(), count, t, scalar).ok());
      std::vector<uint8_t> in_place = src;
      ASSERT_TRUE(ScaleBy(in_place.data(), in_place.data(), count, t, scalar).ok());
      for (size_t i = 0; i < count; ++i) {
        ASSERT_TRUE(SameElement(got.data(), want.data(), i, t))
            << "element " << i << " of 0x" << std::hex << LoadBits(src.data(), i, t) << ": got 0x"
            << LoadBits(got.data(), i, t) << ", want 0x" << LoadBits(want.data(), i, t);
        ASSERT_TRUE(SameElement(in_place.data(), want.data(), i, t)) << "in place, element " << i;
      }
    }
  }
}

TEST(ScaleBy, NarrowProductIsRoundedOnce) {
  // fp16 0x3F1E (1.779296875) times float 0x1.0c6f48p+0: the exact product 1.86572269... is just
  // above the halfway point between 0x3F76 and 0x3F77; rounded to float first it would land on
  // the halfway point and tie to the even 0x3F76.
  const uint16_t src[1] = {0x3F1E};
  uint16_t dst[1];
  ASSERT_TRUE(ScaleBy(dst, src, 1, DataType::kFloat16, 0x1.0c6f48p+0).ok());
  EXPECT_EQ(dst[0], 0x3F77);
  const uint16_t one[1] = {0x3C00};
  ASSERT_TRUE(ScaleBy(dst, one, 1, DataType::kFloat16, 1.0 + std::ldexp(1.0, -11)).ok());
  EXPECT_EQ(dst[0], 0x3C00);  // exactly halfway: ties to even
}

TEST(ScaleBy, IntegerScalarMustBeWholeAndFit) {
  int32_t buf[4] = {1, -2, 3, 4};
  for (double bad : {0.5, -1.25, double{NAN}, double{INFINITY}, 2147483648.0, -2147483649.0}) {
    const Status st = ScaleBy(buf, buf, 4, DataType::kInt32, bad);
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << bad;
    EXPECT_NE(st.message().find("whole number"), std::string::npos) << st.message();
  }
  EXPECT_EQ(ScaleBy(buf, buf, 0, DataType::kInt32, 0.5).code(), Code::kInvalidArgument);
  uint8_t u[2] = {2, 200};
  EXPECT_EQ(ScaleBy(u, u, 2, DataType::kUint8, -1.0).code(), Code::kInvalidArgument);
  EXPECT_EQ(ScaleBy(u, u, 2, DataType::kUint8, 256.0).code(), Code::kInvalidArgument);
  ASSERT_TRUE(ScaleBy(u, u, 2, DataType::kUint8, 255.0).ok());
  EXPECT_EQ(u[0], 254);  // 510 wraps
  EXPECT_EQ(u[1], 56);   // 51000 mod 256
  int64_t big[1] = {3};
  ASSERT_TRUE(ScaleBy(big, big, 1, DataType::kInt64, -9223372036854775808.0).ok());
  EXPECT_EQ(big[0], std::numeric_limits<int64_t>::min());  // -2^63 * 3 wraps to -2^63
  EXPECT_EQ(ScaleBy(big, big, 1, DataType::kInt64, 9223372036854775808.0).code(),
            Code::kInvalidArgument);
  uint64_t ubig[1] = {1};
  ASSERT_TRUE(ScaleBy(ubig, ubig, 1, DataType::kUint64, 18446744073709549568.0).ok());
  EXPECT_EQ(ubig[0], 18446744073709549568ull);
}

TEST(DivideBy, EveryTypeAgainstReference) {
  std::mt19937_64 rng(13);
  const size_t count = 1029;
  for (DataType t : kAllTypes) {
    for (int64_t n : {int64_t{1}, int64_t{2}, int64_t{3}, int64_t{7}, int64_t{1000},
                      int64_t{1} << 40, std::numeric_limits<int64_t>::max()}) {
      // Floating-point division converts n to double, exact below 2^53.
      if (IsFloatingPoint(t) && n > (int64_t{1} << 53)) continue;
      SCOPED_TRACE(std::string(DataTypeName(t)) + " / " + std::to_string(n));
      const std::vector<uint8_t> src = RandomBuffer(count, t, rng);
      std::vector<uint8_t> want(src.size());
      for (size_t i = 0; i < count; ++i) {
        uint64_t bits;
        if (!IsFloatingPoint(t)) {
          bits = testing::IsSigned(t) ? static_cast<uint64_t>(LoadSigned(src.data(), i, t) / n)
                                      : LoadBits(src.data(), i, t) / static_cast<uint64_t>(n);
        } else if (t == DataType::kFloat32) {
          // Correctly rounded x / n (long double carries enough bits for this to round once).
          const long double q = static_cast<long double>(ValueOf(src.data(), i, t)) / n;
          bits = EncodeFloat(static_cast<float>(q), t);
        } else {
          bits = EncodeFloat(ValueOf(src.data(), i, t) / static_cast<double>(n), t);
        }
        StoreBits(want.data(), i, t, bits);
      }
      std::vector<uint8_t> got = src;
      ASSERT_TRUE(DivideBy(got.data(), count, t, n).ok());
      for (size_t i = 0; i < count; ++i) {
        ASSERT_TRUE(SameElement(got.data(), want.data(), i, t))
            << "element " << i << " of 0x" << std::hex << LoadBits(src.data(), i, t) << ": got 0x"
            << LoadBits(got.data(), i, t) << ", want 0x" << LoadBits(want.data(), i, t);
      }
    }
  }
}

TEST(DivideBy, IntegersTruncateTowardZero) {
  int32_t a[6] = {
      7, -7, 5, -5, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()};
  ASSERT_TRUE(DivideBy(a, 6, DataType::kInt32, 2).ok());
  EXPECT_EQ(a[0], 3);
  EXPECT_EQ(a[1], -3);
  EXPECT_EQ(a[2], 2);
  EXPECT_EQ(a[3], -2);
  EXPECT_EQ(a[4], -1073741824);
  EXPECT_EQ(a[5], 1073741823);
  int8_t b[3] = {-128, 127, -1};
  ASSERT_TRUE(DivideBy(b, 3, DataType::kInt8, 3).ok());
  EXPECT_EQ(b[0], -42);
  EXPECT_EQ(b[1], 42);
  EXPECT_EQ(b[2], 0);
  uint32_t c[2] = {0xFFFFFFFFu, 0xFFFFFFFEu};
  ASSERT_TRUE(DivideBy(c, 2, DataType::kUint32, 0xFFFFFFFFll).ok());
  EXPECT_EQ(c[0], 1u);
  EXPECT_EQ(c[1], 0u);
  int64_t d[2] = {std::numeric_limits<int64_t>::min(), -9};
  ASSERT_TRUE(DivideBy(d, 2, DataType::kInt64, 4).ok());
  EXPECT_EQ(d[0], std::numeric_limits<int64_t>::min() / 4);
  EXPECT_EQ(d[1], -2);
  float f[2] = {1.0f, -10.0f};
  ASSERT_TRUE(DivideBy(f, 2, DataType::kFloat32, 3).ok());
  EXPECT_EQ(f[0], 1.0f / 3.0f);
  EXPECT_EQ(f[1], -10.0f / 3.0f);
}

TEST(DivideBy, Errors) {
  float f[2] = {1, 2};
  for (int64_t n : {int64_t{0}, int64_t{-1}, std::numeric_limits<int64_t>::min()}) {
    const Status st = DivideBy(f, 2, DataType::kFloat32, n);
    EXPECT_EQ(st.code(), Code::kInvalidArgument);
    EXPECT_NE(st.message().find("divisor"), std::string::npos) << st.message();
  }
  EXPECT_EQ(DivideBy(f, 0, DataType::kFloat32, 0).code(), Code::kInvalidArgument);
  EXPECT_EQ(DivideBy(nullptr, 2, DataType::kFloat32, 2).code(), Code::kInvalidArgument);
  EXPECT_EQ(DivideBy(nullptr, 2, DataType::kFloat32, 1).code(), Code::kInvalidArgument);
  EXPECT_TRUE(DivideBy(nullptr, 0, DataType::kFloat32, 2).ok());
  EXPECT_EQ(DivideBy(f, 2, static_cast<DataType>(42), 2).code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace tutti::kernels
