// Element-wise reduction functors and the storage/accumulation types they work on, shared by the
// CPU kernels (kernels/cpu) and the CUDA kernels (kernels/cuda).
//
// A storage type S is what sits in memory (int8_t, float, Float16, ...). Its accumulation type
// Accum<S> is what the functors combine: float for the narrow floats, S itself otherwise. A
// reduction widens every element to Accum<S>, combines left to right, and narrows once.
//
// Semantics (identical on host and device):
//  - integers wrap (two's complement), whatever their signedness;
//  - Min/Max propagate NaN: if either operand is NaN the result is a NaN (the right operand
//    when both are). Otherwise ties (e.g. -0 and +0) keep the left operand.
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

#include "core/base/dtype.h"
#include "kernels/host_device.h"
#include "kernels/narrow_float.h"

namespace tutti::kernels {

// ---- storage and accumulation types ----------------------------------------------------------

template <class S>
struct AccumTraits {
  using type = S;
};
template <int E, int M, bool F>
struct AccumTraits<NarrowFloat<E, M, F>> {
  using type = float;
};
template <class S>
using Accum = typename AccumTraits<S>::type;

template <class S>
TUTTI_HD TUTTI_INLINE Accum<S> Widen(S x) {
  if constexpr (IsNarrowFloat<S>::value) {
    return x.ToFloat();
  } else {
    return x;
  }
}

template <class S>
TUTTI_HD TUTTI_INLINE S Narrow(Accum<S> x) {
  if constexpr (IsNarrowFloat<S>::value) {
    return S::FromFloat(x);
  } else {
    return x;
  }
}

// ---- functors --------------------------------------------------------------------------------

namespace internal {
// Integer arithmetic goes through the unsigned type, where wrapping is defined.
template <class T>
struct WrapType {
  using type = T;
};
template <class T>
requires std::is_integral_v<T>
struct WrapType<T> {
  using type = std::make_unsigned_t<T>;
};
}  // namespace internal

template <class T>
struct Sum {
  using W = typename internal::WrapType<T>::type;
  TUTTI_HD TUTTI_INLINE static T Apply(T a, T b) {
    return static_cast<T>(static_cast<W>(static_cast<W>(a) + static_cast<W>(b)));
  }
};

template <class T>
struct Prod {
  using W = typename internal::WrapType<T>::type;
  TUTTI_HD TUTTI_INLINE static T Apply(T a, T b) {
    return static_cast<T>(static_cast<W>(static_cast<W>(a) * static_cast<W>(b)));
  }
};

template <class T>
struct Min {
  // b != b is true only for a NaN b; a NaN a fails b < a and is kept.
  TUTTI_HD TUTTI_INLINE static T Apply(T a, T b) { return (b < a || b != b) ? b : a; }
};

template <class T>
struct Max {
  TUTTI_HD TUTTI_INLINE static T Apply(T a, T b) { return (a < b || b != b) ? b : a; }
};
// Bitwise ops, for integer types only.
template <class T>
struct BitAnd {
  static_assert(std::is_integral_v<T>);
  TUTTI_HD TUTTI_INLINE static T Apply(T a, T b) { return static_cast<T>(a & b); }
};
template <class T>
struct BitOr {
  static_assert(std::is_integral_v<T>);
  TUTTI_HD TUTTI_INLINE static T Apply(T a, T b) { return static_cast<T>(a | b); }
};
template <class T>
struct BitXor {
  static_assert(std::is_integral_v<T>);
  TUTTI_HD TUTTI_INLINE static T Apply(T a, T b) { return static_cast<T>(a ^ b); }
};

// ---- premul_sum and avg, one element ------------------------------------------------------------

// x * f rounded once, f already in the accumulation type: narrow floats form the exact product
// in double; integers wrap.
template <class S>
TUTTI_HD TUTTI_INLINE S ScaleElem(S x, Accum<S> f) {
  if constexpr (IsNarrowFloat<S>::value) {
    return S::FromDouble(static_cast<double>(x.ToFloat()) * static_cast<double>(f));
  } else {
    return Prod<S>::Apply(x, f);
  }
}

// x / n (dn == n as a double): floats through a double quotient rounded once; integers of up to
// 32 bits through a double quotient truncated, which is exact for them (|x| < 2^53, so the
// rounding error of x / n is below 1/n, the least distance from a non-integer x / n to an
// integer) and vectorises on the CPU; 64-bit integers divide.
template <class S>
TUTTI_HD TUTTI_INLINE S DivideElem(S x, int64_t n, double dn) {
  if constexpr (IsNarrowFloat<S>::value) {
    return S::FromDouble(static_cast<double>(x.ToFloat()) / dn);
  } else if constexpr (std::is_same_v<S, float>) {
    return static_cast<float>(static_cast<double>(x) / dn);
  } else if constexpr (std::is_same_v<S, double>) {
    return x / dn;
  } else if constexpr (sizeof(S) < 4 || std::is_same_v<S, int32_t>) {
    // The quotient fits int32 (|x / n| <= |x|).
    return static_cast<S>(static_cast<int32_t>(static_cast<double>(x) / dn));
  } else if constexpr (std::is_same_v<S, uint32_t>) {
    return static_cast<S>(static_cast<int64_t>(static_cast<double>(x) / dn));
  } else {
    return static_cast<S>(x / static_cast<S>(n));
  }
}

// ---- DataType -> storage type -----------------------------------------------------------------

template <class S>
struct TypeTag {
  using type = S;
};

// Calls f(TypeTag<S>{}) with the storage type of t and returns its result; calls
// on_invalid() for a value outside the enum. Both must return the same type.
template <class F, class G>
auto DispatchType(DataType t, F&& f, G&& on_invalid) {
  switch (t) {
    case DataType::kInt8: return f(TypeTag<int8_t>{});
    case DataType::kUint8: return f(TypeTag<uint8_t>{});
    case DataType::kInt32: return f(TypeTag<int32_t>{});
    case DataType::kUint32: return f(TypeTag<uint32_t>{});
    case DataType::kInt64: return f(TypeTag<int64_t>{});
    case DataType::kUint64: return f(TypeTag<uint64_t>{});
    case DataType::kFloat16: return f(TypeTag<Float16>{});
    case DataType::kBfloat16: return f(TypeTag<BFloat16>{});
    case DataType::kFloat32: return f(TypeTag<float>{});
    case DataType::kFloat64: return f(TypeTag<double>{});
    case DataType::kFp8E4M3: return f(TypeTag<Fp8E4M3>{});
    case DataType::kFp8E5M2: return f(TypeTag<Fp8E5M2>{});
  }
  return on_invalid();
}

// Calls f(TypeTag<Op>{}) with the functor template instantiated for accumulation type A, for
// sum/prod/min/max, and band/bor/bxor when A is an integer type; on_invalid() otherwise.
template <class A, class F, class G>
auto DispatchOp(RedOp op, F&& f, G&& on_invalid) {
  switch (op) {
    case RedOp::kSum: return f(TypeTag<Sum<A>>{});
    case RedOp::kProd: return f(TypeTag<Prod<A>>{});
    case RedOp::kMin: return f(TypeTag<Min<A>>{});
    case RedOp::kMax: return f(TypeTag<Max<A>>{});
    default: break;
  }
  if constexpr (std::is_integral_v<A>) {
    switch (op) {
      case RedOp::kBand: return f(TypeTag<BitAnd<A>>{});
      case RedOp::kBor: return f(TypeTag<BitOr<A>>{});
      case RedOp::kBxor: return f(TypeTag<BitXor<A>>{});
      default: break;
    }
  }
  return on_invalid();
}

}  // namespace tutti::kernels
