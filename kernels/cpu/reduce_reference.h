// Test-only scalar reference for the reduction kernels, written without the kernels' functors or
// conversions: integers are combined as 64-bit values with wrap-around and truncated to their
// width; float32/float64 are combined in their own type; the narrow floats are decoded by formula
// (float_reference.h), combined left to right in float and encoded by nearest-value search.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/base/dtype.h"
#include "kernels/float_reference.h"

namespace tutti::kernels::testing {

inline bool IsNarrow(DataType t) {
  return t == DataType::kFloat16 || t == DataType::kBfloat16 || t == DataType::kFp8E4M3 ||
         t == DataType::kFp8E5M2;
}

inline Format NarrowFormat(DataType t) {
  switch (t) {
    case DataType::kFloat16: return kRefFloat16;
    case DataType::kBfloat16: return kRefBFloat16;
    case DataType::kFp8E4M3: return kRefE4M3;
    default: return kRefE5M2;
  }
}

// One reference encoder per narrow format, built on first use (building one takes a while).
inline const RefEncoder& EncoderFor(DataType t) {
  static const RefEncoder f16(kRefFloat16), bf16(kRefBFloat16), e4m3(kRefE4M3), e5m2(kRefE5M2);
  switch (t) {
    case DataType::kFloat16: return f16;
    case DataType::kBfloat16: return bf16;
    case DataType::kFp8E4M3: return e4m3;
    default: return e5m2;
  }
}

inline bool IsSigned(DataType t) {
  return t == DataType::kInt8 || t == DataType::kInt32 || t == DataType::kInt64;
}

// Raw element i of a buffer as an unsigned 64-bit pattern (zero-extended).
inline uint64_t LoadBits(const void* buf, size_t i, DataType t) {
  const size_t size = DataTypeSize(t);
  uint64_t v = 0;
  std::memcpy(&v, static_cast<const char*>(buf) + i * size, size);  // little endian
  return v;
}

inline void StoreBits(void* buf, size_t i, DataType t, uint64_t v) {
  const size_t size = DataTypeSize(t);
  std::memcpy(static_cast<char*>(buf) + i * size, &v, size);
}

// Integer element as a signed value (sign-extended for signed types).
inline int64_t LoadSigned(const void* buf, size_t i, DataType t) {
  const uint64_t v = LoadBits(buf, i, t);
  const int bits = static_cast<int>(8 * DataTypeSize(t));
  if (bits == 64) return static_cast<int64_t>(v);
  const uint64_t sign = uint64_t{1} << (bits - 1);
  return static_cast<int64_t>((v ^ sign) - sign);
}

// The kernels' float semantics, restated: NaN propagates (the right operand when both are NaN),
// ties keep the left operand.
template <class F>
F RefCombineFloat(RedOp op, F a, F b) {
  switch (op) {
    case RedOp::kSum: return a + b;
    case RedOp::kProd: return a * b;
    case RedOp::kMin:
      if (std::isnan(b)) return b;
      if (std::isnan(a)) return a;
      return b < a ? b : a;
    default:  // max
      if (std::isnan(b)) return b;
      if (std::isnan(a)) return a;
      return a < b ? b : a;
  }
}

// a and b are bit patterns whose low 8 * size bits are the element (higher bits: whatever the
// 64-bit sum or product left there; the store truncates them).
inline uint64_t RefCombineInt(RedOp op, DataType t, uint64_t a, uint64_t b) {
  if (op == RedOp::kSum) return a + b;
  if (op == RedOp::kProd) return a * b;
  if (op == RedOp::kBand) return a & b;
  if (op == RedOp::kBor) return a | b;
  if (op == RedOp::kBxor) return a ^ b;
  const int bits = static_cast<int>(8 * DataTypeSize(t));
  const uint64_t mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  const uint64_t sign = uint64_t{1} << (bits - 1);
  // Signed values compare like unsigned ones once the sign bit is flipped.
  const uint64_t flip = IsSigned(t) ? sign : 0;
  const uint64_t ka = (a & mask) ^ flip, kb = (b & mask) ^ flip;
  const bool take_b = op == RedOp::kMin ? kb < ka : ka < kb;
  return take_b ? b : a;
}

// Expected output of srcs[0] op ... op srcs[n-1], element by element.
inline std::vector<uint8_t> RefReduce(const std::vector<const void*>& srcs, size_t count,
                                      DataType t, RedOp op) {
  std::vector<uint8_t> out(count * DataTypeSize(t));
  if (IsNarrow(t)) {
    const Format f = NarrowFormat(t);
    const RefEncoder& encode = EncoderFor(t);
    for (size_t i = 0; i < count; ++i) {
      float acc = static_cast<float>(RefDecode(f, static_cast<uint32_t>(LoadBits(srcs[0], i, t))));
      for (size_t k = 1; k < srcs.size(); ++k) {
        const float x =
            static_cast<float>(RefDecode(f, static_cast<uint32_t>(LoadBits(srcs[k], i, t))));
        acc = RefCombineFloat(op, acc, x);
      }
      // One source is a copy: the exact bits, NaN payloads included.
      StoreBits(out.data(), i, t, srcs.size() == 1 ? LoadBits(srcs[0], i, t) : encode(acc));
    }
  } else if (t == DataType::kFloat32 || t == DataType::kFloat64) {
    for (size_t i = 0; i < count; ++i) {
      if (t == DataType::kFloat32) {
        float acc, x;
        std::memcpy(&acc, static_cast<const char*>(srcs[0]) + 4 * i, 4);
        for (size_t k = 1; k < srcs.size(); ++k) {
          std::memcpy(&x, static_cast<const char*>(srcs[k]) + 4 * i, 4);
          acc = RefCombineFloat(op, acc, x);
        }
        std::memcpy(out.data() + 4 * i, &acc, 4);
      } else {
        double acc, x;
        std::memcpy(&acc, static_cast<const char*>(srcs[0]) + 8 * i, 8);
        for (size_t k = 1; k < srcs.size(); ++k) {
          std::memcpy(&x, static_cast<const char*>(srcs[k]) + 8 * i, 8);
          acc = RefCombineFloat(op, acc, x);
        }
        std::memcpy(out.data() + 8 * i, &acc, 8);
      }
    }
  } else {
    for (size_t i = 0; i < count; ++i) {
      uint64_t acc = LoadBits(srcs[0], i, t);
      for (size_t k = 1; k < srcs.size(); ++k)
        acc = RefCombineInt(op, t, acc, LoadBits(srcs[k], i, t));
      StoreBits(out.data(), i, t, acc);  // truncates to the width
    }
  }
  return out;
}

// Whether element i of got equals element i of want: the same bits, or (floating-point types)
// both NaN, since NaN payloads of arithmetic results are not specified.
inline bool SameElement(const void* got, const void* want, size_t i, DataType t) {
  const uint64_t g = LoadBits(got, i, t), w = LoadBits(want, i, t);
  if (g == w) return true;
  if (IsNarrow(t)) {
    const Format f = NarrowFormat(t);
    return RefIsNaN(f, static_cast<uint32_t>(g)) && RefIsNaN(f, static_cast<uint32_t>(w));
  }
  if (t == DataType::kFloat32) {
    float a, b;
    std::memcpy(&a, &g, 4);
    std::memcpy(&b, &w, 4);
    return std::isnan(a) && std::isnan(b);
  }
  if (t == DataType::kFloat64) {
    double a, b;
    std::memcpy(&a, &g, 8);
    std::memcpy(&b, &w, 8);
    return std::isnan(a) && std::isnan(b);
  }
  return false;
}

}  // namespace tutti::kernels::testing
