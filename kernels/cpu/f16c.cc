#include "kernels/cpu/f16c.h"

#include <immintrin.h>

#include <atomic>

namespace tutti::kernels::cpu {

namespace {
std::atomic<bool> enabled{true};
}  // namespace

bool HasF16C() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
  return has && enabled.load(std::memory_order_relaxed);
}

void SetF16CEnabledForTesting(bool on) { enabled.store(on, std::memory_order_relaxed); }

__attribute__((target("avx2,f16c"))) void HalfToFloatF16C(float* dst, const uint16_t* src,
                                                          size_t count) {
  size_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
  }
  for (; i < count; ++i) dst[i] = _cvtsh_ss(src[i]);
}

__attribute__((target("avx2,f16c"))) void FloatToHalfF16C(uint16_t* dst, const float* src,
                                                          size_t count) {
  constexpr int kRound = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
  size_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), kRound);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), h);
  }
  for (; i < count; ++i) dst[i] = _cvtss_sh(src[i], kRound);
}

}  // namespace tutti::kernels::cpu
