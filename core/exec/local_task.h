// A unit of local work a collective posts to a local execution engine (local_engine.h): a copy,
// a reduction of several sources, a scale (premul_sum) or a division (avg), on memory the engine
// can reach (host memory for the CPU engine, device or mapped memory for the CUDA engine).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/base/dtype.h"
#include "core/base/status.h"

namespace tutti::exec {

struct LocalTask {
  enum class Kind : uint8_t { kCopy, kReduce, kScale, kDivide };
  static constexpr int kMaxSrcs = 64;

  Kind kind = Kind::kCopy;
  DataType type = DataType::kUint8;
  RedOp op = RedOp::kSum;  // kReduce: sum, prod, min or max
  int nsrc = 0;            // kCopy and kScale: 1; kReduce: 1..kMaxSrcs; kDivide: 0 (in place)
  void* dst = nullptr;
  size_t count = 0;        // elements
  double scalar = 1.0;     // kScale
  int64_t divisor = 1;     // kDivide
  const void* srcs[kMaxSrcs];

  // dst[0, count) = src[0, count) (bits; dst == src is a no-op).
  static LocalTask Copy(void* dst, const void* src, size_t count, DataType type);
  // dst = srcs[0] op ... op srcs[n-1] (kernels::ReduceN). n <= kMaxSrcs.
  static LocalTask Reduce(void* dst, const void* const* srcs, int n, size_t count, DataType type, RedOp op);
  // dst = src * scalar (kernels::ScaleBy).
  static LocalTask Scale(void* dst, const void* src, size_t count, DataType type, double scalar);
  // buf /= divisor (kernels::DivideBy).
  static LocalTask Divide(void* buf, size_t count, DataType type, int64_t divisor);

  // "reduce (sum) of 3 float32 x 1024" — for error messages.
  std::string Describe() const;
};

// The checks every engine makes of a kCopy: *bytes is what to move (0: nothing, e.g. dst == src).
Status CopyBytes(const LocalTask& t, size_t* bytes);

}  // namespace tutti::exec
