#include "bench/perf/perf_data.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "kernels/narrow_float.h"

namespace tutti::perf {
namespace {

using kernels::BFloat16;
using kernels::Float16;
using kernels::Fp8E4M3;
using kernels::Fp8E5M2;

uint64_t Mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

// Calls f(T{}) with the storage type of `type`.
template <class F>
void WithType(DataType type, F&& f) {
  switch (type) {
    case DataType::kInt8: f(int8_t{}); return;
    case DataType::kUint8: f(uint8_t{}); return;
    case DataType::kInt32: f(int32_t{}); return;
    case DataType::kUint32: f(uint32_t{}); return;
    case DataType::kInt64: f(int64_t{}); return;
    case DataType::kUint64: f(uint64_t{}); return;
    case DataType::kFloat16: f(Float16{}); return;
    case DataType::kBfloat16: f(BFloat16{}); return;
    case DataType::kFloat32: f(float{}); return;
    case DataType::kFloat64: f(double{}); return;
    case DataType::kFp8E4M3: f(Fp8E4M3{}); return;
    case DataType::kFp8E5M2: f(Fp8E5M2{}); return;
  }
}

template <class T>
T Store(int64_t v) {
  if constexpr (kernels::IsNarrowFloat<T>::value) {
    return T::FromDouble(static_cast<double>(v));
  } else {
    return static_cast<T>(v);
  }
}

template <class T>
double Load(T x) {
  if constexpr (kernels::IsNarrowFloat<T>::value) {
    return x.ToFloat();
  } else {
    return static_cast<double>(x);
  }
}

template <class T>
T Poison() {
  if constexpr (kernels::IsNarrowFloat<T>::value) {
    return T::FromFloat(std::numeric_limits<float>::quiet_NaN());
  } else if constexpr (std::is_floating_point_v<T>) {
    return std::numeric_limits<T>::quiet_NaN();
  } else if constexpr (std::is_signed_v<T>) {
    return std::numeric_limits<T>::min();
  } else {
    return std::numeric_limits<T>::max();
  }
}

bool IsSigned(DataType t) {
  return IsFloatingPoint(t) || t == DataType::kInt8 || t == DataType::kInt32 || t == DataType::kInt64;
}

}  // namespace

int64_t Pattern::Limit(DataType type) {
  switch (type) {
    case DataType::kInt8: return 127;
    case DataType::kUint8: return 254;  // 255 is the poison
    case DataType::kFloat16: return 2048;
    case DataType::kBfloat16: return 256;
    case DataType::kFp8E4M3: return 16;
    case DataType::kFp8E5M2: return 8;
    default: return int64_t{1} << 20;
  }
}

Pattern::Pattern(Coll coll, DataType type, RedOp op, int nranks, int root, size_t count, uint64_t seed)
    : coll_(coll),
      type_(type),
      op_(CollReduces(coll) ? op : RedOp::kMax),  // non-reducing: the "any value" pattern
      n_(nranks < 1 ? 1 : nranks),
      root_(root),
      count_(count),
      seed_(Mix(seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull)),
      signed_(IsSigned(type)) {
  const int64_t L = Limit(type);
  const int64_t n = n_;
  switch (op_) {
    case RedOp::kSum:
      a_ = std::min(n, L);
      m_ = std::min<int64_t>(L / a_, 64);
      break;
    case RedOp::kPremulSum:
      a_ = std::min(n, L / 2);
      m_ = std::min<int64_t>(L / (2 * a_), 64);
      break;
    case RedOp::kAvg:
      m_ = std::min<int64_t>(L / n, 64);  // 0: every value is 0
      break;
    case RedOp::kProd:
      break;
    case RedOp::kMin:
    case RedOp::kMax:
    case RedOp::kBand:
    case RedOp::kBor:
    case RedOp::kBxor:
      m_ = std::min<int64_t>(L, 64);
      break;
  }
}

int64_t Pattern::Gen(int rank, uint64_t k) const {
  const uint64_t h = Mix(seed_ + k);                                      // per element
  const uint64_t hr = Mix(h ^ (static_cast<uint64_t>(rank) + 1) * 0xD6E8FEB86659FD93ull);  // per (element, rank)
  const uint64_t rot = (static_cast<uint64_t>(rank) + (h >> 20)) % static_cast<uint64_t>(n_);
  auto uniform = [&](int64_t m) -> int64_t {
    if (signed_) return static_cast<int64_t>(hr % static_cast<uint64_t>(2 * m + 1)) - m;
    return static_cast<int64_t>(hr % static_cast<uint64_t>(m + 1));
  };
  switch (op_) {
    case RedOp::kSum:
    case RedOp::kPremulSum:
      return rot < static_cast<uint64_t>(a_) ? uniform(m_) : 0;
    case RedOp::kAvg: {
      if (m_ == 0) return 0;
      const int64_t b = 1 + static_cast<int64_t>(h % static_cast<uint64_t>(m_));
      if (n_ % 2 == 1 && rank == n_ - 1) return b;  // unpaired
      const int64_t e = static_cast<int64_t>(Mix(h + static_cast<uint64_t>(rank / 2)) & 1);
      return rank % 2 == 0 ? b + e : b - e;
    }
    case RedOp::kProd:
      return rot < (h & 3) ? 2 : 1;
    case RedOp::kMin:
    case RedOp::kMax:
      return uniform(m_);
    case RedOp::kBand:
    case RedOp::kBor:
    case RedOp::kBxor:  // integer types only; non-negative, so every type holds every result
      return static_cast<int64_t>(hr % static_cast<uint64_t>(m_ + 1));
  }
  return 0;
}

int64_t Pattern::Reduced(uint64_t k) const {
  int64_t acc = 0;
  for (int q = 0; q < n_; ++q) {
    const int64_t v = Gen(q, k);
    switch (op_) {
      case RedOp::kSum:
      case RedOp::kAvg: acc = q == 0 ? v : acc + v; break;
      case RedOp::kPremulSum: acc += static_cast<int64_t>(Scalar(q)) * v; break;
      case RedOp::kProd: acc = q == 0 ? v : acc * v; break;
      case RedOp::kMin: acc = q == 0 ? v : std::min(acc, v); break;
      case RedOp::kMax: acc = q == 0 ? v : std::max(acc, v); break;
      case RedOp::kBand: acc = q == 0 ? v : (acc & v); break;
      case RedOp::kBor: acc = q == 0 ? v : (acc | v); break;
      case RedOp::kBxor: acc = q == 0 ? v : (acc ^ v); break;
    }
  }
  if (op_ == RedOp::kAvg) acc /= n_;
  return acc;
}

bool Pattern::HasOutput(int rank) const {
  return !((coll_ == Coll::kReduce || coll_ == Coll::kGather) && rank != root_);
}

int64_t Pattern::Expected(int rank, uint64_t k) const {
  const uint64_t c = count_ == 0 ? 1 : count_;
  switch (coll_) {
    case Coll::kAllReduce:
    case Coll::kReduce: return Reduced(k);
    case Coll::kReduceScatter: return Reduced(static_cast<uint64_t>(rank) * count_ + k);
    case Coll::kBroadcast: return Gen(root_, k);
    case Coll::kAllGather:
    case Coll::kGather: return Gen(static_cast<int>(k / c), k % c);
    case Coll::kAllToAll: return Gen(static_cast<int>(k / c), static_cast<uint64_t>(rank) * count_ + k % c);
    case Coll::kScatter: return Gen(root_, static_cast<uint64_t>(rank) * count_ + k);
    case Coll::kSendRecv: return Gen((rank - 1 + n_) % n_, k);
  }
  return 0;
}

void FillInput(const Pattern& p, int rank, DataType type, void* buf, size_t first, size_t elems) {
  WithType(type, [&](auto tag) {
    using T = decltype(tag);
    T* out = static_cast<T*>(buf);
    for (size_t j = 0; j < elems; ++j) out[j] = Store<T>(p.Input(rank, first + j));
  });
}

void FillPoison(DataType type, void* buf, size_t elems) {
  WithType(type, [&](auto tag) {
    using T = decltype(tag);
    T* out = static_cast<T*>(buf);
    std::fill(out, out + elems, Poison<T>());
  });
}

void Corrupt(DataType type, void* buf, size_t index) {
  WithType(type, [&](auto tag) {
    using T = decltype(tag);
    static_cast<T*>(buf)[index] = Poison<T>();
  });
}

double LoadElement(DataType type, const void* buf, size_t index) {
  double v = 0;
  WithType(type, [&](auto tag) {
    using T = decltype(tag);
    v = Load(static_cast<const T*>(buf)[index]);
  });
  return v;
}

CheckResult CheckOutput(const Pattern& p, int rank, DataType type, const void* buf, size_t elems) {
  CheckResult r;
  if (!p.HasOutput(rank)) return r;
  WithType(type, [&](auto tag) {
    using T = decltype(tag);
    const T* in = static_cast<const T*>(buf);
    for (size_t k = 0; k < elems; ++k) {
      const double want = static_cast<double>(p.Expected(rank, k));
      const double got = Load(in[k]);
      if (!(got == want)) {
        if (r.wrong == 0) {
          r.first_index = k;
          r.got = got;
          r.expected = want;
        }
        ++r.wrong;
      }
    }
  });
  return r;
}

}  // namespace tutti::perf
