// CPU reduction kernels: dispatch on type and op to the loops of reduce_loops.h, each entry
// point compiled three times (AVX-512, AVX2, x86-64-v2 baseline) and picked by the loader.
//
// Vectorisation, as checked with GCC 12 (-fdump-tree-vect-details per function and clone, and
// objdump of the clones):
//  - every reduce loop (widen-and-combine, fold-in, round-and-store, and the two-source direct
//    loops) vectorises for all 12 types x 4 ops in all three clones: zmm code in the AVX-512
//    clone, ymm in the AVX2 one, xmm in the baseline; the only scalar loop is int64/uint64 prod
//    in the baseline (SSE has no 64-bit multiply);
//  - ScaleBy vectorises everywhere except 64-bit integers in the baseline; DivideBy vectorises
//    for the float types and, through the exact double quotient, for 8- and 32-bit integers
//    (uint32 only with AVX-512); 64-bit integers divide one by one (there is no SIMD division);
//  - it took two flags, set in BUILD: -O3 (GCC 12's -O2 only vectorises loops of known trip
//    count) and -fno-trapping-math: without it GCC will not execute the float operation of the
//    narrow formats' subnormal lane unconditionally, leaves a branch, and the fp16/fp8 loops stay
//    scalar ("control flow in loop"). -ffp-contract=off keeps the AVX clones from fusing a
//    multiply and an add that the baseline rounds separately, so all clones give the same bits;
//  - the narrow-float helpers are always-inline and none is left out of line (nm shows no weak
//    copies), so no clone calls code built for another instruction set.
#include "kernels/cpu/reduce.h"

#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>

#include "kernels/cpu/reduce_loops.h"
#include "kernels/functors.h"
#include "kernels/reduce_args.h"

namespace tutti::kernels {

namespace {

// The instruction sets each entry point is compiled for; the loader picks one (ifunc).
#define TUTTI_CPU_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))

template <class S, class Op>
TUTTI_INLINE void ReduceWithOp(void* const* dsts, int ndst, const void* const* srcs, int nsrc,
                               size_t count) {
  if constexpr (std::is_same_v<S, Float16>) {
    if (cpu::HasF16C()) return cpu_loops::ReduceHalfF16C<Op>(dsts, ndst, srcs, nsrc, count);
  }
  if constexpr (!IsNarrowFloat<S>::value) {
    // Two sources into one destination need no buffer. Each variant names every array once, so
    // that restrict holds; d == a == b takes the buffered loop.
    if (ndst == 1 && nsrc == 2) {
      S* d = static_cast<S*>(dsts[0]);
      const S* a = static_cast<const S*>(srcs[0]);
      const S* b = static_cast<const S*>(srcs[1]);
      if (d != a && d != b) return cpu_loops::Reduce2<S, Op>(d, a, b, count);
      if (d != b) return cpu_loops::Reduce2IntoLeft<S, Op>(d, b, count);   // d == a
      if (d != a) return cpu_loops::Reduce2IntoRight<S, Op>(d, a, count);  // d == b
    }
  }
  cpu_loops::Reduce<S, Op>(dsts, ndst, srcs, nsrc, count);
}

template <class S>
TUTTI_CPU_CLONES void ReduceTyped(void* const* dsts, int ndst, const void* const* srcs, int nsrc,
                                  size_t count, RedOp op) {
  using A = Accum<S>;
  switch (op) {
    case RedOp::kSum: return ReduceWithOp<S, Sum<A>>(dsts, ndst, srcs, nsrc, count);
    case RedOp::kProd: return ReduceWithOp<S, Prod<A>>(dsts, ndst, srcs, nsrc, count);
    case RedOp::kMin: return ReduceWithOp<S, Min<A>>(dsts, ndst, srcs, nsrc, count);
    case RedOp::kMax: return ReduceWithOp<S, Max<A>>(dsts, ndst, srcs, nsrc, count);
    default: break;
  }
  if constexpr (std::is_integral_v<A>) {
    switch (op) {
      case RedOp::kBand: return ReduceWithOp<S, BitAnd<A>>(dsts, ndst, srcs, nsrc, count);
      case RedOp::kBor: return ReduceWithOp<S, BitOr<A>>(dsts, ndst, srcs, nsrc, count);
      case RedOp::kBxor: return ReduceWithOp<S, BitXor<A>>(dsts, ndst, srcs, nsrc, count);
      default: break;
    }
  }
  // Anything else was rejected by CheckReduceArgs.
}

template <class S>
TUTTI_CPU_CLONES void ScaleTyped(void* dst, const void* src, Accum<S> factor, size_t count) {
  if (dst == src) {
    cpu_loops::ScaleInPlace<S>(static_cast<S*>(dst), factor, count);
  } else {
    cpu_loops::Scale<S>(static_cast<S*>(dst), static_cast<const S*>(src), factor, count);
  }
}

template <class S>
TUTTI_CPU_CLONES void DivideTyped(void* buf, int64_t n, size_t count) {
  cpu_loops::Divide<S>(static_cast<S*>(buf), n, count);
}

Status RunReduce(void* const* dsts, int ndst, const void* const* srcs, int nsrc, size_t count,
                 DataType type, RedOp op) {
  if (count == 0) return OkStatus();
  if (nsrc == 1) {  // a copy, bit for bit whatever the op
    const size_t bytes = count * DataTypeSize(type);
    for (int j = 0; j < ndst; ++j) {
      if (dsts[j] != srcs[0]) std::memcpy(dsts[j], srcs[0], bytes);
    }
    return OkStatus();
  }
  return DispatchType(
      type,
      [&](auto tag) {
        ReduceTyped<typename decltype(tag)::type>(dsts, ndst, srcs, nsrc, count, op);
        return OkStatus();
      },
      [] { return InternalError("unreachable"); });
}

}  // namespace

Status ReduceN(void* dst, const void* const* srcs, int n, size_t count, DataType type, RedOp op) {
  void* const dsts[1] = {dst};
  TUTTI_RETURN_IF_ERROR(CheckReduceArgs("ReduceN", "dst", dsts, 1, srcs, n, count, type, op));
  return RunReduce(dsts, 1, srcs, n, count, type, op);
}

Status ReduceNPrechecked(void* dst, const void* const* srcs, int n, size_t count, DataType type, RedOp op) {
  void* const dsts[1] = {dst};
  return RunReduce(dsts, 1, srcs, n, count, type, op);
}

Status ReduceCopyN(void* const* dsts, int ndst, const void* const* srcs, int nsrc, size_t count,
                   DataType type, RedOp op) {
  TUTTI_RETURN_IF_ERROR(
      CheckReduceArgs("ReduceCopyN", "dsts", dsts, ndst, srcs, nsrc, count, type, op));
  return RunReduce(dsts, ndst, srcs, nsrc, count, type, op);
}

Status ScaleBy(void* dst, const void* src, size_t count, DataType type, double scalar) {
  const char* fn = "ScaleBy";
  TUTTI_RETURN_IF_ERROR(CheckType(fn, type));
  TUTTI_RETURN_IF_ERROR(CheckCount(fn, count, type));
  return DispatchType(
      type,
      [&](auto tag) -> Status {
        using S = typename decltype(tag)::type;
        Accum<S> factor{};
        if constexpr (std::is_integral_v<S>) {
          if (!IntegerScalar<S>(scalar, &factor)) {
            return ArgError(fn, "scalar " + std::to_string(scalar) +
                                    " is not a whole number in the range of " + DataTypeName(type));
          }
        } else {
          factor = static_cast<Accum<S>>(scalar);
        }
        if (count == 0) return OkStatus();
        TUTTI_RETURN_IF_ERROR(CheckPointer(fn, "src", src, count, type));
        TUTTI_RETURN_IF_ERROR(CheckPointer(fn, "dst", dst, count, type));
        if (PartiallyOverlap(dst, src, count * sizeof(S))) {
          return ArgError(fn, "dst partially overlaps src");
        }
        ScaleTyped<S>(dst, src, factor, count);
        return OkStatus();
      },
      [] { return InternalError("unreachable"); });
}

Status DivideBy(void* buf, size_t count, DataType type, int64_t n) {
  const char* fn = "DivideBy";
  TUTTI_RETURN_IF_ERROR(CheckType(fn, type));
  TUTTI_RETURN_IF_ERROR(CheckCount(fn, count, type));
  if (n < 1) return ArgError(fn, "divisor must be >= 1 (got " + std::to_string(n) + ")");
  if (count == 0) return OkStatus();
  TUTTI_RETURN_IF_ERROR(CheckPointer(fn, "buf", buf, count, type));
  if (n == 1) return OkStatus();
  // Integers of up to 32 bits go through a double quotient, which vectorises and is exact: for
  // |v| < 2^53 and n exact in double, the rounding error of v / n is below 1/n, the smallest
  // distance from a non-integer v / n to an integer, so truncation gives the integer quotient
  // (n >= 2^53 gives 0 both ways).
  return DispatchType(
      type,
      [&](auto tag) {
        DivideTyped<typename decltype(tag)::type>(buf, n, count);
        return OkStatus();
      },
      [] { return InternalError("unreachable"); });
}

}  // namespace tutti::kernels
