#include "tests/coll/values.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/narrow_float.h"

namespace tutti::testing {

namespace {
template <typename T>
T Load(const void* buf, uint64_t i) {
  T v;
  std::memcpy(&v, static_cast<const char*>(buf) + i * sizeof(T), sizeof(T));
  return v;
}
template <typename T>
void Put(void* buf, uint64_t i, T v) {
  std::memcpy(static_cast<char*>(buf) + i * sizeof(T), &v, sizeof(T));
}
template <typename T>
T Wrap(double v) {  // modular conversion for integers
  return static_cast<T>(static_cast<uint64_t>(static_cast<int64_t>(v)));
}
}  // namespace

double GetAs(DataType t, const void* b, uint64_t i) {
  using namespace kernels;
  switch (t) {
    case DataType::kInt8: return Load<int8_t>(b, i);
    case DataType::kUint8: return Load<uint8_t>(b, i);
    case DataType::kInt32: return Load<int32_t>(b, i);
    case DataType::kUint32: return Load<uint32_t>(b, i);
    case DataType::kInt64: return static_cast<double>(Load<int64_t>(b, i));
    case DataType::kUint64: return static_cast<double>(Load<uint64_t>(b, i));
    case DataType::kFloat16: return Load<Float16>(b, i).ToFloat();
    case DataType::kBfloat16: return Load<BFloat16>(b, i).ToFloat();
    case DataType::kFloat32: return Load<float>(b, i);
    case DataType::kFloat64: return Load<double>(b, i);
    case DataType::kFp8E4M3: return Load<Fp8E4M3>(b, i).ToFloat();
    case DataType::kFp8E5M2: return Load<Fp8E5M2>(b, i).ToFloat();
  }
  return 0;
}

void SetAs(DataType t, void* b, uint64_t i, double v) {
  using namespace kernels;
  switch (t) {
    case DataType::kInt8: return Put(b, i, Wrap<int8_t>(v));
    case DataType::kUint8: return Put(b, i, Wrap<uint8_t>(v));
    case DataType::kInt32: return Put(b, i, Wrap<int32_t>(v));
    case DataType::kUint32: return Put(b, i, Wrap<uint32_t>(v));
    case DataType::kInt64: return Put(b, i, Wrap<int64_t>(v));
    case DataType::kUint64: return Put(b, i, Wrap<uint64_t>(v));
    case DataType::kFloat16: return Put(b, i, Float16::FromFloat(static_cast<float>(v)));
    case DataType::kBfloat16: return Put(b, i, BFloat16::FromFloat(static_cast<float>(v)));
    case DataType::kFloat32: return Put(b, i, static_cast<float>(v));
    case DataType::kFloat64: return Put(b, i, v);
    case DataType::kFp8E4M3: return Put(b, i, Fp8E4M3::FromFloat(static_cast<float>(v)));
    case DataType::kFp8E5M2: return Put(b, i, Fp8E5M2::FromFloat(static_cast<float>(v)));
  }
}

double Epsilon(DataType t) {
  switch (t) {
    case DataType::kFloat16: return std::ldexp(1.0, -10);
    case DataType::kBfloat16: return std::ldexp(1.0, -7);
    case DataType::kFloat32: return std::ldexp(1.0, -23);
    case DataType::kFloat64: return std::ldexp(1.0, -52);
    case DataType::kFp8E4M3: return std::ldexp(1.0, -3);
    case DataType::kFp8E5M2: return std::ldexp(1.0, -2);
    default: return 0;
  }
}

double ExactInput(DataType t, RedOp op, int rank, uint64_t k) {
  const bool fp8 = t == DataType::kFp8E4M3 || t == DataType::kFp8E5M2;
  const bool is_unsigned = t == DataType::kUint8 || t == DataType::kUint32 || t == DataType::kUint64;
  switch (op) {
    case RedOp::kProd: return 1 + static_cast<double>((rank + k) % 2);  // powers of two
    case RedOp::kMin:
    case RedOp::kMax: {
      double v = static_cast<double>((rank * 7 + k * 3) % 11);
      return is_unsigned ? v : v - 5;
    }
    case RedOp::kBand:
    case RedOp::kBor:
    case RedOp::kBxor:  // integer types only: every bit pattern of 0..15
      return static_cast<double>((rank * 5 + k * 3) % 16);
    default:  // sum, avg, premul_sum: sums stay exact (fp8: at most 8 ranks of 0/1)
      return fp8 ? static_cast<double>((rank + k) % 2) : static_cast<double>((rank * 3 + k) % 4);
  }
}

double PremulScalar(int rank) { return 1 + rank % 2; }

double ReduceRef(DataType t, RedOp op, const std::vector<double>& vals) {
  double acc = op == RedOp::kPremulSum ? vals[0] * PremulScalar(0) : vals[0];
  for (size_t r = 1; r < vals.size(); ++r) {
    double v = vals[r];
    switch (op) {
      case RedOp::kSum:
      case RedOp::kAvg: acc += v; break;
      case RedOp::kPremulSum: acc += v * PremulScalar(static_cast<int>(r)); break;
      case RedOp::kProd: acc *= v; break;
      case RedOp::kMin: acc = std::min(acc, v); break;
      case RedOp::kMax: acc = std::max(acc, v); break;
      case RedOp::kBand: acc = static_cast<double>(static_cast<int64_t>(acc) & static_cast<int64_t>(v)); break;
      case RedOp::kBor: acc = static_cast<double>(static_cast<int64_t>(acc) | static_cast<int64_t>(v)); break;
      case RedOp::kBxor: acc = static_cast<double>(static_cast<int64_t>(acc) ^ static_cast<int64_t>(v)); break;
    }
  }
  if (op == RedOp::kAvg) {
    acc = IsFloatingPoint(t) ? acc / static_cast<double>(vals.size()) : std::trunc(acc / static_cast<double>(vals.size()));
  }
  return acc;
}

}  // namespace tutti::testing
