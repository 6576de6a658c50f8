// How torch's tensors and reduce ops map onto tutti's types and ops.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/csrc/distributed/c10d/Types.hpp>

#include <string>

#include "core/base/dtype.h"

namespace tutti::torch_backend {

// A contiguous CPU tensor seen as `count` elements of `type` at `data`.
struct Elements {
  void* data = nullptr;
  size_t count = 0;
  DataType type = DataType::kUint8;
};

// For copies (broadcast, gathers, all-to-all, send/recv): the tensor's own type where tutti has
// it, else its bytes (int16, bool, complex, ...: moving them needs no arithmetic).
Elements ForCopy(const at::Tensor& t);

// A reduction's op, and its scalar for premul_sum.
struct Reduction {
  RedOp op = RedOp::kSum;
  double premul_scalar = 1.0;
};

// For reductions: the tensor's type, with complex tensors seen as pairs of reals where the op
// allows it (sum, avg, premul_sum) and bool as uint8 with sum/max as or and product/min as and.
// Types and ops tutti cannot reduce throw a c10::Error naming them and `what`.
Elements ForReduce(const at::Tensor& t, const c10d::ReduceOp& op, const std::string& what, Reduction* r);

// Checks a tensor the backend can work on: CPU, dense, not requiring a layout we cannot move.
void CheckCpuTensor(const at::Tensor& t, const std::string& what);

}  // namespace tutti::torch_backend
