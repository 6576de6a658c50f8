// Test-only reference for the narrow float formats, derived independently of narrow_float.h:
// decoding by the textbook formula (-1)^s * 2^(e - bias) * (1 + m / 2^M) in double, encoding by
// searching the table of every finite value for the nearest one (ties to the even code).
// Slow and obvious on purpose.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

namespace tutti::kernels::testing {

struct Format {
  int e;             // exponent bits
  int m;             // mantissa bits
  bool finite_only;  // e4m3: no infinities, only S.1111.111 is NaN
  int bits() const { return 1 + e + m; }
  int bias() const { return (1 << (e - 1)) - 1; }
  uint32_t sign_bit() const { return 1u << (e + m); }
};

inline constexpr Format kRefFloat16{5, 10, false};
inline constexpr Format kRefBFloat16{8, 7, false};
inline constexpr Format kRefE4M3{4, 3, true};
inline constexpr Format kRefE5M2{5, 2, false};

inline bool RefIsNaN(Format f, uint32_t code) {
  const uint32_t exp = (code >> f.m) & ((1u << f.e) - 1);
  const uint32_t man = code & ((1u << f.m) - 1);
  if (f.finite_only) return exp == (1u << f.e) - 1 && man == (1u << f.m) - 1;
  return exp == (1u << f.e) - 1 && man != 0;
}

// The value of a code; NaN codes give a NaN.
inline double RefDecode(Format f, uint32_t code) {
  const bool neg = (code & f.sign_bit()) != 0;
  const int exp = static_cast<int>((code >> f.m) & ((1u << f.e) - 1));
  const int man = static_cast<int>(code & ((1u << f.m) - 1));
  double v;
  if (RefIsNaN(f, code)) {
    return std::numeric_limits<double>::quiet_NaN();
  } else if (!f.finite_only && exp == (1 << f.e) - 1) {
    v = std::numeric_limits<double>::infinity();
  } else if (exp == 0) {
    v = std::ldexp(static_cast<double>(man), 1 - f.bias() - f.m);  // subnormal: 0.m * 2^(1-bias)
  } else {
    v = std::ldexp(1.0 + std::ldexp(static_cast<double>(man), -f.m), exp - f.bias());
  }
  return neg ? -v : v;
}

// Magnitude codes of the largest finite value and of +inf (or of the saturation value).
inline uint32_t RefMaxFiniteCode(Format f) {
  return f.finite_only ? f.sign_bit() - 2 : (((1u << f.e) - 1) << f.m) - 1;
}

// The NaN we produce for a NaN input: finite-only formats have one; IEEE-like ones get the
// quiet bit and the top payload bits of the float.
inline uint32_t RefNaN(Format f, float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  const uint32_t sign = (u >> 31) ? f.sign_bit() : 0;
  if (f.finite_only) return sign | (f.sign_bit() - 1);
  const uint32_t inf = ((1u << f.e) - 1) << f.m;
  const uint32_t payload = (u >> (23 - f.m)) & ((1u << f.m) - 1);
  return sign | inf | (1u << (f.m - 1)) | payload;
}

// Nearest finite value by search, ties to the even code. Beyond the largest finite value the
// next candidate is max + ulp(max) (the value the next code would have): rounding to it gives
// +-inf (IEEE-like) or the largest finite value (finite-only formats saturate). Build once,
// call many times.
class RefEncoder {
 public:
  explicit RefEncoder(Format f) : f_(f), max_code_(RefMaxFiniteCode(f)) {
    values_.resize(max_code_ + 2);  // values_[c] = value of magnitude code c, plus the virtual one
    for (uint32_t c = 0; c <= max_code_; ++c) values_[c] = RefDecode(f, c);
    const int emax = static_cast<int>(max_code_ >> f.m) - f.bias();
    values_[max_code_ + 1] = values_[max_code_] + std::ldexp(1.0, emax - f.m);
  }
  uint32_t operator()(double x) const {
    if (std::isnan(x)) return RefNaN(f_, static_cast<float>(x));
    const uint32_t sign = std::signbit(x) ? f_.sign_bit() : 0;
    const uint32_t overflow_code = f_.finite_only ? max_code_ : max_code_ + 1;
    const double a = std::fabs(x);
    if (a >= values_[max_code_ + 1]) return sign | overflow_code;
    // First code whose value is >= a, and the one below it.
    const uint32_t hi = static_cast<uint32_t>(std::lower_bound(values_.begin(), values_.end(), a) -
                                              values_.begin());
    uint32_t best = hi;
    if (values_[hi] != a && hi != 0) {
      const uint32_t lo = hi - 1;
      const double dlo = a - values_[lo], dhi = values_[hi] - a;
      best = dlo < dhi ? lo : dhi < dlo ? hi : ((lo & 1) == 0 ? lo : hi);
    }
    if (best > max_code_) best = overflow_code;
    return sign | best;
  }

 private:
  Format f_;
  uint32_t max_code_;
  std::vector<double> values_;
};

}  // namespace tutti::kernels::testing
