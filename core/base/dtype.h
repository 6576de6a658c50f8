// Data types and reduction operations of collectives: the vocabulary shared by the API, the
// algorithms (which only need element sizes) and the kernels (which need everything).
#pragma once

#include <cstddef>
#include <cstdint>

namespace tutti {

enum class DataType : uint8_t {
  kInt8 = 0,
  kUint8,
  kInt32,
  kUint32,
  kInt64,
  kUint64,
  kFloat16,   // IEEE binary16
  kBfloat16,  // bfloat16
  kFloat32,
  kFloat64,
  kFp8E4M3,   // OCP FP8 E4M3 (finite-only, max 448, one NaN pattern per sign)
  kFp8E5M2,   // OCP FP8 E5M2 (IEEE-like: infinities and NaNs)
};
constexpr int kNumDataTypes = 12;

enum class RedOp : uint8_t {
  kSum = 0,
  kProd,
  kMin,
  kMax,
  kAvg,        // sum, then divided by the number of ranks (integers: truncating division)
  kPremulSum,  // each rank's input multiplied by its own scalar, then summed
  kBand,       // bitwise and, or, exclusive or: integer types only
  kBor,
  kBxor,
};
constexpr int kNumRedOps = 9;

constexpr bool IsBitwise(RedOp op) { return op == RedOp::kBand || op == RedOp::kBor || op == RedOp::kBxor; }

constexpr size_t DataTypeSize(DataType t) {
  switch (t) {
    case DataType::kInt8:
    case DataType::kUint8:
    case DataType::kFp8E4M3:
    case DataType::kFp8E5M2:
      return 1;
    case DataType::kFloat16:
    case DataType::kBfloat16:
      return 2;
    case DataType::kInt32:
    case DataType::kUint32:
    case DataType::kFloat32:
      return 4;
    case DataType::kInt64:
    case DataType::kUint64:
    case DataType::kFloat64:
      return 8;
  }
  return 0;
}

constexpr bool IsFloatingPoint(DataType t) {
  return t == DataType::kFloat16 || t == DataType::kBfloat16 || t == DataType::kFloat32 ||
         t == DataType::kFloat64 || t == DataType::kFp8E4M3 || t == DataType::kFp8E5M2;
}

// Whether `op` is defined on `t`: everything is, except the bitwise ops on floating-point types.
constexpr bool OpTakesType(RedOp op, DataType t) { return !IsBitwise(op) || !IsFloatingPoint(t); }

// "float32", "bfloat16", "fp8_e4m3", ... and "sum", "prod", "min", "max", "avg", "premul_sum".
const char* DataTypeName(DataType t);
const char* RedOpName(RedOp op);
// Parses the names above plus the nccl-tests spellings (int8 uint8 int32 uint32 int64 uint64
// half float16 bfloat16 float float32 double float64 f8e4m3 f8e5m2 ...). false if unknown.
bool ParseDataType(const char* name, DataType* out);
bool ParseRedOp(const char* name, RedOp* out);

}  // namespace tutti
