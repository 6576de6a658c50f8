// ReduceN / ReduceCopyN against the scalar reference (reduce_reference.h), bit for bit.
#include "kernels/cpu/reduce.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/f16c.h"
#include "kernels/cpu/reduce_reference.h"

namespace tutti::kernels {
namespace {

using testing::IsNarrow;
using testing::RefReduce;
using testing::SameElement;

constexpr DataType kAllTypes[] = {DataType::kInt8,    DataType::kUint8,    DataType::kInt32,
                                  DataType::kUint32,  DataType::kInt64,    DataType::kUint64,
                                  DataType::kFloat16, DataType::kBfloat16, DataType::kFloat32,
                                  DataType::kFloat64, DataType::kFp8E4M3,  DataType::kFp8E5M2};
// The element-wise ops a type takes: the four, and band/bor/bxor for integer types.
std::vector<RedOp> OpsFor(DataType t) {
  std::vector<RedOp> ops;
  for (RedOp op : {RedOp::kSum, RedOp::kProd, RedOp::kMin, RedOp::kMax, RedOp::kBand, RedOp::kBor, RedOp::kBxor})
    if (OpTakesType(op, t)) ops.push_back(op);
  return ops;
}

// A buffer of `count` elements placed one element past a 64-byte boundary (so that vector loops
// start unaligned), with guard bytes on both sides.
class Buffer {
 public:
  Buffer(size_t count, DataType t) : size_(DataTypeSize(t)), bytes_(count * size_) {
    storage_.assign(bytes_ + 256, kGuard);
    offset_ = 64 - reinterpret_cast<uintptr_t>(storage_.data()) % 64 + size_;
  }
  void* data() { return storage_.data() + offset_; }
  const void* data() const { return storage_.data() + offset_; }
  bool GuardsIntact() const {
    for (size_t i = 0; i < storage_.size(); ++i) {
      if ((i < offset_ || i >= offset_ + bytes_) && storage_[i] != kGuard) return false;
    }
    return true;
  }

 private:
  static constexpr uint8_t kGuard = 0xA5;
  size_t size_, bytes_, offset_ = 0;
  std::vector<uint8_t> storage_;
};

// Random elements: for floating-point types a mix of ordinary values, special values (zeros,
// infinities, NaN, subnormals, extremes) and raw bit patterns; for integers, full-range values
// and small ones (so that products are not all zero).
void Fill(void* buf, size_t count, DataType t, std::mt19937_64& rng) {
  for (size_t i = 0; i < count; ++i) {
    const uint64_t r = rng();
    const int kind = static_cast<int>(rng() % 16);
    uint64_t bits = r;
    if (!IsFloatingPoint(t)) {
      if (kind < 6) bits = static_cast<uint64_t>(static_cast<int64_t>(r % 11) - 5);
    } else {
      double v = std::ldexp(static_cast<double>(r % 2000) / 1000.0 + 0.25,
                            static_cast<int>(rng() % 9) - 4);
      if (r & (uint64_t{1} << 40)) v = -v;
      const double specials[] = {0.0,   -0.0, INFINITY, -INFINITY, NAN, 1e-310,
                                 1e-40, 3e38, 1e300,    65504,     448};
      if (kind == 0) v = specials[rng() % (sizeof(specials) / sizeof(specials[0]))];
      const bool raw = kind == 1 || (IsNarrow(t) && kind < 6);
      if (!raw) {
        if (t == DataType::kFloat64) {
          std::memcpy(&bits, &v, 8);
        } else {
          const float f = static_cast<float>(v);
          uint32_t fb;
          std::memcpy(&fb, &f, 4);
          bits = fb;
          if (IsNarrow(t)) bits = testing::EncoderFor(t)(f);  // reference, not the kernels
        }
      }
    }
    testing::StoreBits(buf, i, t, bits);
  }
}

std::string Describe(DataType t, RedOp op, int n, size_t count) {
  return std::string(DataTypeName(t)) +
         (cpu::HasF16C() || t != DataType::kFloat16 ? "" : " (portable)") + " " + RedOpName(op) +
         " n=" + std::to_string(n) + " count=" + std::to_string(count);
}

// Compares got with want element by element; reports the first difference.
::testing::AssertionResult Matches(const void* got, const std::vector<uint8_t>& want, size_t count,
                                   DataType t) {
  for (size_t i = 0; i < count; ++i) {
    if (!SameElement(got, want.data(), i, t)) {
      return ::testing::AssertionFailure()
             << "element " << i << ": got 0x" << std::hex << testing::LoadBits(got, i, t)
             << ", want 0x" << testing::LoadBits(want.data(), i, t);
    }
  }
  return ::testing::AssertionSuccess();
}

// Runs the float16 cases with the F16C path off, so that the portable path is tested on every
// CPU (the F16C one where the CPU has it).
class PortableHalf {
 public:
  explicit PortableHalf(bool on) : on_(on) {
    if (on_) cpu::SetF16CEnabledForTesting(false);
  }
  ~PortableHalf() {
    if (on_) cpu::SetF16CEnabledForTesting(true);
  }

 private:
  bool on_;
};

// Every type, plus float16 once more on the portable path.
struct TypeCase {
  DataType type;
  bool portable_half;
};
std::vector<TypeCase> TypeCases() {
  std::vector<TypeCase> cases;
  for (DataType t : kAllTypes) cases.push_back({t, false});
  cases.push_back({DataType::kFloat16, true});
  return cases;
}

TEST(ReduceN, EveryTypeOpSourceCountAndLength) {
  std::mt19937_64 rng(2024);
  for (const TypeCase tc : TypeCases()) {
    const PortableHalf portable(tc.portable_half);
    const DataType t = tc.type;
    for (RedOp op : OpsFor(t)) {
      for (int n : {1, 2, 3, 5, 8}) {
        for (size_t count : {0, 1, 7, 33, 1000, 4099}) {
          SCOPED_TRACE(Describe(t, op, n, count));
          std::vector<Buffer> srcs;
          std::vector<const void*> ptrs;
          for (int k = 0; k < n; ++k) srcs.emplace_back(count, t);
          for (auto& b : srcs) {
            Fill(b.data(), count, t, rng);
            ptrs.push_back(b.data());
          }
          const std::vector<uint8_t> want = RefReduce(ptrs, count, t, op);
          Buffer dst(count, t);
          ASSERT_TRUE(ReduceN(dst.data(), ptrs.data(), n, count, t, op).ok());
          ASSERT_TRUE(Matches(dst.data(), want, count, t));
          ASSERT_TRUE(dst.GuardsIntact());
          // In place: the result lands on the first source.
          ASSERT_TRUE(ReduceN(srcs[0].data(), ptrs.data(), n, count, t, op).ok());
          ASSERT_TRUE(Matches(srcs[0].data(), want, count, t)) << "dst == srcs[0]";
          ASSERT_TRUE(srcs[0].GuardsIntact());
        }
      }
    }
  }
}

// Lengths that cross the kernels' 8 KiB blocks, with the destination being the last source.
TEST(ReduceN, BlockBoundariesAndDestinationIsLastSource) {
  std::mt19937_64 rng(7);
  for (const TypeCase tc : TypeCases()) {
    const PortableHalf portable(tc.portable_half);
    const DataType t = tc.type;
    for (RedOp op : OpsFor(t)) {
      const size_t count = 3 * 8192 + 5;
      SCOPED_TRACE(Describe(t, op, 3, count));
      std::vector<Buffer> srcs;
      std::vector<const void*> ptrs;
      for (int k = 0; k < 3; ++k) srcs.emplace_back(count, t);
      for (auto& b : srcs) {
        Fill(b.data(), count, t, rng);
        ptrs.push_back(b.data());
      }
      const std::vector<uint8_t> want = RefReduce(ptrs, count, t, op);
      ASSERT_TRUE(ReduceN(srcs[2].data(), ptrs.data(), 3, count, t, op).ok());
      ASSERT_TRUE(Matches(srcs[2].data(), want, count, t));
    }
  }
}

// The two-source paths: dst separate, dst == a, dst == b, and a == b == dst.
TEST(ReduceN, TwoSourceAliasing) {
  std::mt19937_64 rng(99);
  const size_t count = 1003;
  for (const TypeCase tc : TypeCases()) {
    const PortableHalf portable(tc.portable_half);
    const DataType t = tc.type;
    for (RedOp op : OpsFor(t)) {
      SCOPED_TRACE(Describe(t, op, 2, count));
      Buffer a(count, t), b(count, t);
      Fill(a.data(), count, t, rng);
      Fill(b.data(), count, t, rng);
      const std::vector<const void*> ab = {a.data(), b.data()};
      const std::vector<uint8_t> want = RefReduce(ab, count, t, op);
      ASSERT_TRUE(ReduceN(b.data(), ab.data(), 2, count, t, op).ok());  // dst == srcs[1]
      ASSERT_TRUE(Matches(b.data(), want, count, t));
      const std::vector<const void*> aa = {a.data(), a.data()};
      const std::vector<uint8_t> want_aa = RefReduce(aa, count, t, op);
      ASSERT_TRUE(ReduceN(a.data(), aa.data(), 2, count, t, op).ok());  // all the same buffer
      ASSERT_TRUE(Matches(a.data(), want_aa, count, t));
    }
  }
}

// Min/max ties between -0 and +0 keep the left operand, on every path (separate destination,
// destination on either source, more sources than two).
TEST(ReduceN, SignedZeroTiesKeepTheLeftOperand) {
  for (const TypeCase tc : TypeCases()) {
    const PortableHalf portable(tc.portable_half);
    const DataType t = tc.type;
    if (!IsFloatingPoint(t)) continue;
    const uint64_t neg = uint64_t{1} << (8 * DataTypeSize(t) - 1);
    for (RedOp op : {RedOp::kMin, RedOp::kMax}) {
      for (int n : {2, 3}) {
        for (int where : {-1, 0, 1}) {  // destination: separate, srcs[0], srcs[1]
          SCOPED_TRACE(Describe(t, op, n, 64) + " dst at " + std::to_string(where));
          const size_t count = 64;
          std::vector<Buffer> srcs;
          std::vector<const void*> ptrs;
          for (int k = 0; k < n; ++k) srcs.emplace_back(count, t);
          for (int k = 0; k < n; ++k) {
            for (size_t i = 0; i < count; ++i) {
              testing::StoreBits(srcs[k].data(), i, t, ((i >> k) & 1) ? neg : 0);
            }
            ptrs.push_back(srcs[k].data());
          }
          const std::vector<uint8_t> want = RefReduce(ptrs, count, t, op);
          Buffer sep(count, t);
          void* dst = where < 0 ? sep.data() : srcs[where].data();
          ASSERT_TRUE(ReduceN(dst, ptrs.data(), n, count, t, op).ok());
          ASSERT_TRUE(Matches(dst, want, count, t));
          for (size_t i = 0; i < count; ++i) {  // the reference itself: the first source's zero
            ASSERT_EQ(testing::LoadBits(want.data(), i, t), (i & 1) ? neg : 0);
          }
        }
      }
    }
  }
}

TEST(ReduceN, OneSourceCopiesExactBits) {
  // Even NaN payloads that a widen/round trip would change (a signalling fp16 NaN).
  const uint16_t src[4] = {0x7C01, 0xFC01, 0x3C00, 0x8000};
  uint16_t dst[4] = {};
  const void* srcs[1] = {src};
  ASSERT_TRUE(ReduceN(dst, srcs, 1, 4, DataType::kFloat16, RedOp::kMax).ok());
  EXPECT_EQ(std::memcmp(src, dst, sizeof(src)), 0);
}

TEST(ReduceN, KnownValues) {
  const float a[3] = {1.5f, -2.0f, 0.0f}, b[3] = {2.25f, 8.0f, -0.0f};
  float out[3];
  const void* srcs[2] = {a, b};
  ASSERT_TRUE(ReduceN(out, srcs, 2, 3, DataType::kFloat32, RedOp::kSum).ok());
  EXPECT_EQ(out[0], 3.75f);
  EXPECT_EQ(out[1], 6.0f);
  ASSERT_TRUE(ReduceN(out, srcs, 2, 3, DataType::kFloat32, RedOp::kProd).ok());
  EXPECT_EQ(out[1], -16.0f);
  const int8_t x[2] = {100, -128}, y[2] = {100, -1};
  int8_t z[2];
  const void* isrcs[2] = {x, y};
  ASSERT_TRUE(ReduceN(z, isrcs, 2, 2, DataType::kInt8, RedOp::kSum).ok());
  EXPECT_EQ(z[0], -56);  // 200 wraps
  EXPECT_EQ(z[1], 127);
  ASSERT_TRUE(ReduceN(z, isrcs, 2, 2, DataType::kInt8, RedOp::kMin).ok());
  EXPECT_EQ(z[1], -128);
  // bf16: 1 + 2^-8 + 2^-8 is exact in float and rounds once to 1 + 2^-7 (0x3F81); rounding after
  // every step would tie to even twice and give 1.0 (0x3F80).
  const uint16_t one[1] = {0x3F80}, tiny[1] = {0x3B80};  // 1.0, 2^-8
  uint16_t r[1];
  const void* bsrcs[3] = {one, tiny, tiny};
  ASSERT_TRUE(ReduceN(r, bsrcs, 3, 1, DataType::kBfloat16, RedOp::kSum).ok());
  EXPECT_EQ(r[0], 0x3F81);
  // e4m3 saturates: 448 + 448 = 448.
  const uint8_t m[1] = {0x7E};
  uint8_t s[1];
  const void* esrcs[2] = {m, m};
  ASSERT_TRUE(ReduceN(s, esrcs, 2, 1, DataType::kFp8E4M3, RedOp::kSum).ok());
  EXPECT_EQ(s[0], 0x7E);
}

TEST(ReduceCopyN, ThreeDestinationsOneOfThemASource) {
  std::mt19937_64 rng(5);
  for (const TypeCase tc : TypeCases()) {
    const PortableHalf portable(tc.portable_half);
    const DataType t = tc.type;
    for (RedOp op : OpsFor(t)) {
      for (int n : {1, 2, 4}) {
        for (size_t count : {0, 33, 4099}) {
          SCOPED_TRACE(Describe(t, op, n, count));
          std::vector<Buffer> srcs;
          std::vector<const void*> ptrs;
          for (int k = 0; k < n; ++k) srcs.emplace_back(count, t);
          for (auto& b : srcs) {
            Fill(b.data(), count, t, rng);
            ptrs.push_back(b.data());
          }
          const std::vector<uint8_t> want = RefReduce(ptrs, count, t, op);
          Buffer d0(count, t), d1(count, t);
          void* dsts[3] = {d0.data(), srcs[n - 1].data(), d1.data()};
          ASSERT_TRUE(ReduceCopyN(dsts, 3, ptrs.data(), n, count, t, op).ok());
          for (void* d : dsts) ASSERT_TRUE(Matches(d, want, count, t));
          ASSERT_TRUE(d0.GuardsIntact() && d1.GuardsIntact() && srcs[n - 1].GuardsIntact());
        }
      }
    }
  }
}

}  // namespace
TEST(ReduceN, BitwiseOpsNeedIntegerTypes) {
  float a[4] = {1, 2, 3, 4}, d[4];
  const void* srcs[2] = {a, a};
  for (RedOp op : {RedOp::kBand, RedOp::kBor, RedOp::kBxor}) {
    Status st = ReduceN(d, srcs, 2, 4, DataType::kFloat32, op);
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << RedOpName(op);
    EXPECT_NE(st.message().find("integer type"), std::string::npos) << st.ToString();
  }
  uint32_t x[3] = {0xF0F0F0F0u, 0x0FF00FF0u, 0x12345678u}, y[3] = {0xFFFF0000u, 0x00FFFF00u, 0x0000FFFFu}, r[3];
  const void* xy[2] = {x, y};
  ASSERT_TRUE(ReduceN(r, xy, 2, 3, DataType::kUint32, RedOp::kBand).ok());
  EXPECT_EQ(r[0], 0xF0F00000u);
  ASSERT_TRUE(ReduceN(r, xy, 2, 3, DataType::kUint32, RedOp::kBor).ok());
  EXPECT_EQ(r[1], 0x0FFFFFF0u);
  ASSERT_TRUE(ReduceN(r, xy, 2, 3, DataType::kUint32, RedOp::kBxor).ok());
  EXPECT_EQ(r[2], 0x1234A987u);
}

}  // namespace tutti::kernels
