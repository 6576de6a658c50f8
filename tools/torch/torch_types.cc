#include "tools/torch/torch_types.h"

#include <c10/util/Exception.h>

namespace tutti::torch_backend {
namespace {

bool NativeType(at::ScalarType s, DataType* out) {
  switch (s) {
    case at::kChar: *out = DataType::kInt8; return true;
    case at::kByte: *out = DataType::kUint8; return true;
    case at::kInt: *out = DataType::kInt32; return true;
    case at::kUInt32: *out = DataType::kUint32; return true;
    case at::kLong: *out = DataType::kInt64; return true;
    case at::kUInt64: *out = DataType::kUint64; return true;
    case at::kHalf: *out = DataType::kFloat16; return true;
    case at::kBFloat16: *out = DataType::kBfloat16; return true;
    case at::kFloat: *out = DataType::kFloat32; return true;
    case at::kDouble: *out = DataType::kFloat64; return true;
    case at::kFloat8_e4m3fn: *out = DataType::kFp8E4M3; return true;
    case at::kFloat8_e5m2: *out = DataType::kFp8E5M2; return true;
    default: return false;
  }
}

const char* OpName(c10d::ReduceOp::RedOpType op) {
  switch (op) {
    case c10d::ReduceOp::SUM: return "SUM";
    case c10d::ReduceOp::AVG: return "AVG";
    case c10d::ReduceOp::PRODUCT: return "PRODUCT";
    case c10d::ReduceOp::MIN: return "MIN";
    case c10d::ReduceOp::MAX: return "MAX";
    case c10d::ReduceOp::BAND: return "BAND";
    case c10d::ReduceOp::BOR: return "BOR";
    case c10d::ReduceOp::BXOR: return "BXOR";
    case c10d::ReduceOp::PREMUL_SUM: return "PREMUL_SUM";
    default: return "UNUSED";
  }
}

}  // namespace

void CheckCpuTensor(const at::Tensor& t, const std::string& what) {
  TORCH_CHECK(t.defined(), "tutti: ", what, ": undefined tensor");
  TORCH_CHECK(t.device().is_cpu(), "tutti: ", what, ": tensor on ", t.device().str(),
              "; the tutti backend takes CPU tensors (CUDA tensors need the CUDA data path, not built yet)");
  TORCH_CHECK(t.layout() == at::kStrided, "tutti: ", what, ": only dense (strided) tensors, not ", t.layout());
}

Elements ForCopy(const at::Tensor& t) {
  Elements e;
  e.data = t.data_ptr();
  if (NativeType(t.scalar_type(), &e.type)) {
    e.count = static_cast<size_t>(t.numel());
  } else {
    e.type = DataType::kUint8;
    e.count = static_cast<size_t>(t.numel()) * t.element_size();
  }
  return e;
}

Elements ForReduce(const at::Tensor& t, const c10d::ReduceOp& op, const std::string& what, Reduction* r) {
  Elements e;
  e.data = t.data_ptr();
  e.count = static_cast<size_t>(t.numel());
  const c10d::ReduceOp::RedOpType kind = op.op_;
  switch (kind) {
    case c10d::ReduceOp::SUM: r->op = RedOp::kSum; break;
    case c10d::ReduceOp::AVG: r->op = RedOp::kAvg; break;
    case c10d::ReduceOp::PRODUCT: r->op = RedOp::kProd; break;
    case c10d::ReduceOp::MIN: r->op = RedOp::kMin; break;
    case c10d::ReduceOp::MAX: r->op = RedOp::kMax; break;
    case c10d::ReduceOp::BAND: r->op = RedOp::kBand; break;
    case c10d::ReduceOp::BOR: r->op = RedOp::kBor; break;
    case c10d::ReduceOp::BXOR: r->op = RedOp::kBxor; break;
    case c10d::ReduceOp::PREMUL_SUM: {
      r->op = RedOp::kPremulSum;
      auto* s = dynamic_cast<c10d::NCCLPreMulSumSupplement*>(op.supplement_.get());
      TORCH_CHECK(s != nullptr, "tutti: ", what, ": PREMUL_SUM without its factor");
      r->premul_scalar = s->tensor_factor.defined() ? s->tensor_factor.to(at::kCPU).item<double>() : s->double_factor;
      break;
    }
    default: TORCH_CHECK(false, "tutti: ", what, ": unknown reduce op ", static_cast<int>(kind));
  }
  const at::ScalarType s = t.scalar_type();
  if (NativeType(s, &e.type)) return e;
  if (s == at::kBool) {
    // bool: sum / max are "any" (or), product / min are "all" (and), as torch's own reductions.
    e.type = DataType::kUint8;
    switch (kind) {
      case c10d::ReduceOp::SUM: case c10d::ReduceOp::MAX: case c10d::ReduceOp::BOR: r->op = RedOp::kBor; return e;
      case c10d::ReduceOp::PRODUCT: case c10d::ReduceOp::MIN: case c10d::ReduceOp::BAND: r->op = RedOp::kBand; return e;
      case c10d::ReduceOp::BXOR: r->op = RedOp::kBxor; return e;
      default: TORCH_CHECK(false, "tutti: ", what, ": ReduceOp ", OpName(kind), " is not defined for bool tensors");
    }
  }
  if (s == at::kComplexFloat || s == at::kComplexDouble) {
    TORCH_CHECK(kind == c10d::ReduceOp::SUM || kind == c10d::ReduceOp::AVG || kind == c10d::ReduceOp::PREMUL_SUM,
                "tutti: ", what, ": ReduceOp ", OpName(kind), " is not defined for complex tensors (SUM, AVG and PREMUL_SUM are)");
    e.type = s == at::kComplexFloat ? DataType::kFloat32 : DataType::kFloat64;
    e.count *= 2;
    return e;
  }
  TORCH_CHECK(false, "tutti: ", what, ": tensors of type ", s,
              " cannot be reduced by tutti (it reduces int8, uint8, int32, uint32, int64, uint64, float16, "
              "bfloat16, float32, float64, float8_e4m3fn, float8_e5m2, bool and complex)");
}

}  // namespace tutti::torch_backend
