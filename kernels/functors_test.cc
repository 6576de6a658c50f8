#include "kernels/functors.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

namespace tutti::kernels {
namespace {

uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

TEST(Functors, IntegersWrap) {
  EXPECT_EQ(Sum<int8_t>::Apply(127, 1), -128);
  EXPECT_EQ(Sum<uint8_t>::Apply(200, 100), 44);
  EXPECT_EQ(Prod<int8_t>::Apply(-128, -1), -128);
  EXPECT_EQ(Prod<uint8_t>::Apply(16, 17), 16);
  EXPECT_EQ(Sum<int32_t>::Apply(std::numeric_limits<int32_t>::max(), 1),
            std::numeric_limits<int32_t>::min());
  EXPECT_EQ(Prod<int32_t>::Apply(65536, 65536), 0);
  EXPECT_EQ(Prod<int32_t>::Apply(-3, 5), -15);
  EXPECT_EQ(Sum<uint32_t>::Apply(0xFFFFFFFFu, 2u), 1u);
  EXPECT_EQ(Sum<int64_t>::Apply(std::numeric_limits<int64_t>::max(), 1),
            std::numeric_limits<int64_t>::min());
  EXPECT_EQ(Prod<uint64_t>::Apply(uint64_t{1} << 63, 2), 0u);
  EXPECT_EQ(Min<int8_t>::Apply(-5, 3), -5);
  EXPECT_EQ(Max<uint64_t>::Apply(~uint64_t{0}, 3), ~uint64_t{0});
}

TEST(Functors, MinMaxPropagateNaNAndKeepTheLeftOnTies) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float nan2 = -std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(Min<float>::Apply(nan, 1.0f)));
  EXPECT_TRUE(std::isnan(Min<float>::Apply(1.0f, nan)));
  EXPECT_TRUE(std::isnan(Max<float>::Apply(nan, 1.0f)));
  EXPECT_TRUE(std::isnan(Max<float>::Apply(1.0f, nan)));
  EXPECT_EQ(Bits(Min<float>::Apply(nan, nan2)), Bits(nan2));  // right NaN when both
  EXPECT_EQ(Bits(Max<float>::Apply(nan, nan2)), Bits(nan2));
  EXPECT_EQ(Bits(Min<float>::Apply(-0.0f, 0.0f)), Bits(-0.0f));
  EXPECT_EQ(Bits(Min<float>::Apply(0.0f, -0.0f)), Bits(0.0f));
  EXPECT_EQ(Bits(Max<float>::Apply(-0.0f, 0.0f)), Bits(-0.0f));
  EXPECT_EQ(Min<double>::Apply(2.0, -std::numeric_limits<double>::infinity()),
            -std::numeric_limits<double>::infinity());
  EXPECT_EQ(Max<float>::Apply(2.0f, 3.0f), 3.0f);
  EXPECT_EQ(Sum<float>::Apply(0.1f, 0.2f), 0.1f + 0.2f);
  EXPECT_EQ(Prod<double>::Apply(3.0, 0.5), 1.5);
}

TEST(Functors, AccumulationTypes) {
  static_assert(std::is_same_v<Accum<Float16>, float>);
  static_assert(std::is_same_v<Accum<BFloat16>, float>);
  static_assert(std::is_same_v<Accum<Fp8E4M3>, float>);
  static_assert(std::is_same_v<Accum<Fp8E5M2>, float>);
  static_assert(std::is_same_v<Accum<float>, float>);
  static_assert(std::is_same_v<Accum<double>, double>);
  static_assert(std::is_same_v<Accum<int8_t>, int8_t>);
  static_assert(std::is_same_v<Accum<uint64_t>, uint64_t>);
  EXPECT_EQ(Widen(Float16::FromBits(0x3C00)), 1.0f);
  EXPECT_EQ(Narrow<BFloat16>(2.0f).bits, 0x4000);
  EXPECT_EQ(Widen<int32_t>(-7), -7);
  EXPECT_EQ(Narrow<double>(0.25), 0.25);
}

TEST(Functors, DispatchCoversEveryTypeWithItsSize) {
  for (int i = 0; i < kNumDataTypes; ++i) {
    const DataType t = static_cast<DataType>(i);
    const size_t size = DispatchType(
        t, [](auto tag) { return sizeof(typename decltype(tag)::type); }, [] { return size_t{0}; });
    EXPECT_EQ(size, DataTypeSize(t)) << DataTypeName(t);
  }
  EXPECT_EQ(DispatchType(
                static_cast<DataType>(kNumDataTypes), [](auto) { return 1; }, [] { return -1; }),
            -1);
  const auto is_float = [](DataType t) {
    return DispatchType(
        t, [](auto tag) { return !std::is_integral_v<typename decltype(tag)::type>; },
        [] { return false; });
  };
  for (int i = 0; i < kNumDataTypes; ++i) {
    EXPECT_EQ(is_float(static_cast<DataType>(i)), IsFloatingPoint(static_cast<DataType>(i)));
  }
}

TEST(Functors, DispatchOpOnlyForTheElementwiseOps) {
  int hits = 0, int_hits = 0;
  for (int i = 0; i < kNumRedOps; ++i) {
    hits += DispatchOp<float>(
        static_cast<RedOp>(i), [](auto) { return 1; }, [] { return 0; });
    int_hits += DispatchOp<int32_t>(
        static_cast<RedOp>(i), [](auto) { return 1; }, [] { return 0; });
  }
  EXPECT_EQ(hits, 4);      // sum, prod, min, max
  EXPECT_EQ(int_hits, 7);  // and band, bor, bxor
  EXPECT_EQ(DispatchOp<uint8_t>(
                RedOp::kBxor, [](auto tag) { return decltype(tag)::type::Apply(uint8_t{0xF0}, uint8_t{0x3C}); },
                [] { return uint8_t{0}; }),
            0xCC);
  const float r = DispatchOp<float>(
      RedOp::kMax, [](auto tag) { return decltype(tag)::type::Apply(1.0f, 2.0f); },
      [] { return 0.0f; });
  EXPECT_EQ(r, 2.0f);
}

}  // namespace
}  // namespace tutti::kernels
