// TUTTI_HD marks functions compiled for both the host and CUDA devices, so that element types and
// reduction functors are written once: under nvcc it is `__host__ __device__`, elsewhere nothing.
// TUTTI_INLINE forces inlining on the host (the CPU kernels are compiled for several instruction
// sets in one file, and a helper that the compiler left out of line would run with the baseline
// instruction set; forcing it inline keeps every helper inside the clone that calls it).
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define TUTTI_HD __host__ __device__
#define TUTTI_INLINE __forceinline__
#else
#define TUTTI_HD
#define TUTTI_INLINE inline __attribute__((always_inline))
#endif

namespace tutti::kernels {

// Bit casts between float/double and unsigned integers that work in host and device code.
TUTTI_HD TUTTI_INLINE uint32_t FloatBits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
#endif
}

TUTTI_HD TUTTI_INLINE float FloatFromBits(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
#endif
}

}  // namespace tutti::kernels
