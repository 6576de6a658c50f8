// The inner loops of the CPU kernels (included by reduce.cc only).
//
// Every loop is a plain counted loop over restrict-qualified pointers whose body is branch-free
// (the functors and the narrow-float conversions are bit arithmetic and selects), so that GCC
// vectorises it. A reduction works block by block through a float/element buffer on the stack
// that stays in L1: widen and combine the first two sources into it, fold the other sources in,
// then round it into every destination. Reading every source of a block before writing any
// destination is what lets a destination be one of the sources.
//
// Everything here is always-inline: the entry points in reduce.cc are compiled several times
// (one clone per instruction set) and each clone must contain its own copy of these loops.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/cpu/f16c.h"
#include "kernels/functors.h"

namespace tutti::kernels::cpu_loops {

// Elements per block: 8 KiB of accumulators.
template <class S>
inline constexpr size_t kBlock = 8192 / sizeof(Accum<S>);

template <class S, class Op>
TUTTI_INLINE void CombineTwo(Accum<S>* __restrict acc, const S* __restrict a, const S* __restrict b,
                             size_t len) {
  for (size_t i = 0; i < len; ++i) acc[i] = Op::Apply(Widen(a[i]), Widen(b[i]));
}

template <class S, class Op>
TUTTI_INLINE void CombineInto(Accum<S>* __restrict acc, const S* __restrict b, size_t len) {
  for (size_t i = 0; i < len; ++i) acc[i] = Op::Apply(acc[i], Widen(b[i]));
}

template <class S>
TUTTI_INLINE void Store(S* __restrict d, const Accum<S>* __restrict acc, size_t len) {
  if constexpr (IsNarrowFloat<S>::value) {
    for (size_t i = 0; i < len; ++i) d[i] = Narrow<S>(acc[i]);
  } else {
    std::memcpy(d, acc, len * sizeof(S));
  }
}

// dsts[j][i] = srcs[0][i] op ... op srcs[nsrc-1][i] for every j; nsrc >= 2.
template <class S, class Op>
TUTTI_INLINE void Reduce(void* const* dsts, int ndst, const void* const* srcs, int nsrc,
                         size_t count) {
  constexpr size_t kB = kBlock<S>;
  alignas(64) Accum<S> acc[kB];
  for (size_t begin = 0; begin < count; begin += kB) {
    const size_t len = count - begin < kB ? count - begin : kB;
    CombineTwo<S, Op>(acc, static_cast<const S*>(srcs[0]) + begin,
                      static_cast<const S*>(srcs[1]) + begin, len);
    for (int k = 2; k < nsrc; ++k) {
      CombineInto<S, Op>(acc, static_cast<const S*>(srcs[k]) + begin, len);
    }
    for (int j = 0; j < ndst; ++j) Store<S>(static_cast<S*>(dsts[j]) + begin, acc, len);
  }
}

// float16 on CPUs with F16C: each block of a source is widened by vcvtph2ps into a float
// buffer and the result rounded by vcvtps2ph (the same bits as the portable conversions, about
// four times faster).
template <class Op>
TUTTI_INLINE void ReduceHalfF16C(void* const* dsts, int ndst, const void* const* srcs, int nsrc,
                                 size_t count) {
  constexpr size_t kB = kBlock<Float16>;
  alignas(64) float acc[kB];
  alignas(64) float tmp[kB];
  for (size_t begin = 0; begin < count; begin += kB) {
    const size_t len = count - begin < kB ? count - begin : kB;
    cpu::HalfToFloatF16C(acc, static_cast<const uint16_t*>(srcs[0]) + begin, len);
    for (int k = 1; k < nsrc; ++k) {
      cpu::HalfToFloatF16C(tmp, static_cast<const uint16_t*>(srcs[k]) + begin, len);
      for (size_t i = 0; i < len; ++i) acc[i] = Op::Apply(acc[i], tmp[i]);
    }
    for (int j = 0; j < ndst; ++j) {
      cpu::FloatToHalfF16C(static_cast<uint16_t*>(dsts[j]) + begin, acc, len);
    }
  }
}

// Two-source reduction straight into one destination, for element types that are their own
// accumulation type (no rounding step, so no buffer is needed). d may be a or b: each of these
// variants names every array once, so restrict holds.
template <class S, class Op>
TUTTI_INLINE void Reduce2(S* __restrict d, const S* __restrict a, const S* __restrict b,
                          size_t count) {
  for (size_t i = 0; i < count; ++i) d[i] = Op::Apply(a[i], b[i]);
}
template <class S, class Op>
TUTTI_INLINE void Reduce2IntoLeft(S* __restrict d, const S* __restrict b, size_t count) {
  for (size_t i = 0; i < count; ++i) d[i] = Op::Apply(d[i], b[i]);
}
template <class S, class Op>
TUTTI_INLINE void Reduce2IntoRight(S* __restrict d, const S* __restrict a, size_t count) {
  for (size_t i = 0; i < count; ++i) d[i] = Op::Apply(a[i], d[i]);
}

// ---- ScaleBy / DivideBy ------------------------------------------------------------------------

// d[i] = s[i] * f (ScaleElem in kernels/functors.h).
template <class S>
TUTTI_INLINE void Scale(S* __restrict d, const S* __restrict s, Accum<S> f, size_t count) {
  for (size_t i = 0; i < count; ++i) d[i] = ScaleElem<S>(s[i], f);
}
template <class S>
TUTTI_INLINE void ScaleInPlace(S* __restrict d, Accum<S> f, size_t count) {
  for (size_t i = 0; i < count; ++i) d[i] = ScaleElem<S>(d[i], f);
}

// buf[i] /= n (DivideElem in kernels/functors.h).
template <class S>
TUTTI_INLINE void Divide(S* __restrict buf, int64_t n, size_t count) {
  const double dn = static_cast<double>(n);
  for (size_t i = 0; i < count; ++i) buf[i] = DivideElem<S>(buf[i], n, dn);
}

}  // namespace tutti::kernels::cpu_loops
