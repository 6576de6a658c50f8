// Storage types for the narrow floating-point formats: IEEE binary16, bfloat16 and the two OCP
// FP8 formats. They hold bits only; arithmetic widens them to float (see functors.h).
//
// One template covers all four: a sign bit, E exponent bits (bias 2^(E-1)-1) and M mantissa bits.
//   Float16  = <5, 10>  IEEE-like: subnormals, +-inf, NaNs
//   BFloat16 = <8, 7>   IEEE-like (the top half of a float)
//   Fp8E5M2  = <5, 2>   IEEE-like
//   Fp8E4M3  = <4, 3>   finite only: exponent 15 is a normal exponent, S.1111.111 is the only NaN
//                       (max finite 448); it has no infinity
//
// FromFloat rounds to nearest, ties to even, and handles subnormals. Overflow gives infinity,
// except for Fp8E4M3, which saturates to +-448 (infinities too, as NCCL's SATFINITE does).
// FromDouble rounds a double once, the same way. NaN stays NaN with its sign: IEEE-like formats
// keep the top payload bits and set the quiet bit; Fp8E4M3 has a single NaN (S.1111.111).
// ToFloat is exact.
//
// Both directions are branch-free bit arithmetic (plus one float addition for the subnormal
// range) so that the CPU loops that use them vectorise; the same code runs on CUDA devices.
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/host_device.h"

namespace tutti::kernels {

// d rounded to float toward zero, with the last bit set when that was inexact ("round to odd").
// Infinite and NaN inputs stay so; finite values beyond float's range give +-FLT_MAX.
TUTTI_HD TUTTI_INLINE float RoundToOddFloat(double d) {
  const float t = static_cast<float>(d);  // to nearest even
  const double back = t;
  uint32_t bits = FloatBits(t);
  // If rounding went away from zero (including to infinity), step back toward zero by one ulp.
  const bool away = (back < 0 ? -back : back) > (d < 0 ? -d : d);
  bits -= away ? 1u : 0u;
  bits |= back != d ? 1u : 0u;  // inexact (or NaN): make it odd
  return FloatFromBits(bits);
}

template <int E, int M, bool kFiniteOnly>
struct NarrowFloat {
  static_assert(1 + E + M == 8 || 1 + E + M == 16, "8- or 16-bit formats only");
  static_assert(E >= 2 && E <= 8 && M >= 1 && M <= 22, "unsupported format");
  using Bits = std::conditional_t<1 + E + M == 8, uint8_t, uint16_t>;

  static constexpr int kExponentBits = E;
  static constexpr int kMantissaBits = M;
  static constexpr int kBias = (1 << (E - 1)) - 1;
  static constexpr bool kFiniteOnlyFormat = kFiniteOnly;
  static constexpr uint32_t kSignBit = 1u << (E + M);
  static constexpr uint32_t kMagnitudeMask = kSignBit - 1;
  static constexpr uint32_t kMantissaMask = (1u << M) - 1;
  // Magnitude code of +inf (IEEE-like) and of the NaN (finite-only).
  static constexpr uint32_t kInfCode = ((1u << E) - 1) << M;
  static constexpr uint32_t kFiniteOnlyNaN = kMagnitudeMask;
  // Largest magnitude code a finite value rounds to before overflow handling.
  static constexpr uint32_t kMaxFiniteCode = kFiniteOnly ? kMagnitudeMask - 1 : kInfCode - 1;

  Bits bits;

  TUTTI_HD TUTTI_INLINE static constexpr NarrowFloat FromBits(uint32_t b) {
    return NarrowFloat{static_cast<Bits>(b)};
  }

  // Exact widening.
  TUTTI_HD TUTTI_INLINE float ToFloat() const {
    const uint32_t h = bits;
    const uint32_t sign = (h & kSignBit) << (31 - E - M);
    if constexpr (E == 8) {
      // Same exponent field as float: the bits are the top of a float's bits, subnormals too.
      return FloatFromBits(sign | ((h & kMagnitudeMask) << (23 - M)));
    } else {
      const uint32_t mag = h & kMagnitudeMask;
      // Normal numbers: rebias the exponent, shift the mantissa into place.
      const uint32_t normal = (mag << (23 - M)) + (uint32_t{127 - kBias} << 23);
      // Zero and subnormals: mantissa * 2^(1 - bias - M), exact in float.
      const uint32_t sub =
          FloatBits(Mul(static_cast<float>(static_cast<int32_t>(mag)), SubnormalUlp()));
      // Infinities and NaNs (IEEE-like), or the single NaN (finite-only).
      const uint32_t special = 0x7f800000u | (mag << (23 - M));
      const bool is_special = kFiniteOnly ? mag == kFiniteOnlyNaN : mag >= kInfCode;
      uint32_t out = mag < (1u << M) ? sub : normal;
      out = is_special ? special : out;
      return FloatFromBits(sign | out);
    }
  }

  // Round to nearest even, with the overflow and NaN rules described at the top of the file.
  TUTTI_HD TUTTI_INLINE static NarrowFloat FromFloat(float f) {
    constexpr int kShift = 23 - M;
    const uint32_t u = FloatBits(f);
    const uint32_t sign = (u >> 31) << (E + M);
    const uint32_t a = u & 0x7fffffffu;
    // Normal range: rebias (wraps for values below the range; that lane is not selected), then
    // add just under half an ulp plus the kept lsb, so that ties go to even, and truncate. A
    // carry out of the mantissa correctly bumps the exponent.
    uint32_t normal = a - (uint32_t{127 - kBias} << 23);
    normal = (normal + ((1u << (kShift - 1)) - 1) + ((normal >> kShift) & 1)) >> kShift;
    // Subnormal range: adding 2^(24 - bias - M), whose ulp is the smallest subnormal, makes the
    // float unit round |f| to a multiple of that ulp; the low bits are then the code (up to 2^M,
    // the smallest normal, when it rounds up).
    const float magic = FloatFromBits(uint32_t{127 + 24 - kBias - M} << 23);
    const uint32_t sub = FloatBits(Add(FloatFromBits(a), magic)) - FloatBits(magic);
    constexpr uint32_t kMinNormalFloatBits = uint32_t{128 - kBias} << 23;  // 2^(1 - bias)
    uint32_t out = a < kMinNormalFloatBits ? sub : normal;
    constexpr uint32_t kOverflowCode = kFiniteOnly ? kMaxFiniteCode : kInfCode;
    out = out < kOverflowCode ? out : kOverflowCode;
    const uint32_t nan =
        kFiniteOnly ? kFiniteOnlyNaN : kInfCode | (1u << (M - 1)) | ((a >> kShift) & kMantissaMask);
    out = a > 0x7f800000u ? nan : out;
    return FromBits(sign | out);
  }

  // Rounds a double once (to nearest even): rounding to odd into float keeps a sticky bit, so the
  // second rounding, into M + 1 <= 22 bits, sees the same halfway cases as the exact value.
  TUTTI_HD TUTTI_INLINE static NarrowFloat FromDouble(double d) {
    return FromFloat(RoundToOddFloat(d));
  }

 private:
  // Rounded float operations that a device compiler may not fuse into an FMA with a neighbouring
  // operation (nvcc contracts by default; the host kernels build with -ffp-contract=off).
  TUTTI_HD TUTTI_INLINE static float Add(float x, float y) {
#if defined(__CUDA_ARCH__)
    return __fadd_rn(x, y);
#else
    return x + y;
#endif
  }
  TUTTI_HD TUTTI_INLINE static float Mul(float x, float y) {
#if defined(__CUDA_ARCH__)
    return __fmul_rn(x, y);
#else
    return x * y;
#endif
  }

  TUTTI_HD TUTTI_INLINE static float SubnormalUlp() {
    return FloatFromBits(uint32_t{127 + 1 - kBias - M} << 23);  // 2^(1 - bias - M), a normal float
  }
};

using Float16 = NarrowFloat<5, 10, false>;
using BFloat16 = NarrowFloat<8, 7, false>;
using Fp8E4M3 = NarrowFloat<4, 3, true>;
using Fp8E5M2 = NarrowFloat<5, 2, false>;

static_assert(sizeof(Float16) == 2 && sizeof(BFloat16) == 2);
static_assert(sizeof(Fp8E4M3) == 1 && sizeof(Fp8E5M2) == 1);
static_assert(std::is_trivially_copyable_v<Float16> && std::is_standard_layout_v<Float16>);

template <class T>
struct IsNarrowFloat : std::false_type {};
template <int E, int M, bool F>
struct IsNarrowFloat<NarrowFloat<E, M, F>> : std::true_type {};

}  // namespace tutti::kernels
