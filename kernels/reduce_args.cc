#include "kernels/reduce_args.h"

#include <cstdint>
#include <cstring>

namespace tutti::kernels {

namespace {
// "name" or "name[index]" (index < 0: no index).
std::string Label(const char* name, int index) {
  return index < 0 ? std::string(name) : std::string(name) + "[" + std::to_string(index) + "]";
}
}  // namespace

Status ArgError(const char* fn, const std::string& what) {
  return InvalidArgument(std::string(fn) + ": " + what);
}

Status CheckType(const char* fn, DataType type) {
  if (static_cast<int>(type) >= kNumDataTypes) {
    return ArgError(fn, "unknown data type " + std::to_string(static_cast<int>(type)));
  }
  return OkStatus();
}

Status CheckElementwiseOp(const char* fn, RedOp op) {
  switch (op) {
    case RedOp::kSum:
    case RedOp::kProd:
    case RedOp::kMin:
    case RedOp::kMax:
    case RedOp::kBand:
    case RedOp::kBor:
    case RedOp::kBxor: return OkStatus();
    case RedOp::kAvg:
    case RedOp::kPremulSum:
      return ArgError(fn, std::string("op ") + RedOpName(op) +
                              " is not element-wise; compose it from sum with ScaleBy / DivideBy");
  }
  return ArgError(fn, "unknown op " + std::to_string(static_cast<int>(op)));
}

Status CheckPointer(const char* fn, const char* name, int index, const void* p, size_t count, DataType type) {
  if (p != nullptr && reinterpret_cast<uintptr_t>(p) % DataTypeSize(type) == 0) return OkStatus();
  const std::string label = Label(name, index);
  if (p == nullptr) {
    return ArgError(fn, label + " is null (count " + std::to_string(count) + ")");
  }
  if (reinterpret_cast<uintptr_t>(p) % DataTypeSize(type) != 0) {
    return ArgError(fn, label + " is not aligned to the " + std::to_string(DataTypeSize(type)) +
                            "-byte elements of " + DataTypeName(type));
  }
  return OkStatus();
}

bool PartiallyOverlap(const void* a, const void* b, size_t bytes) {
  const uintptr_t x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return x != y && x < y + bytes && y < x + bytes;
}

Status CheckCount(const char* fn, size_t count, DataType type) {
  if (count > SIZE_MAX / DataTypeSize(type)) {
    return ArgError(fn, "count " + std::to_string(count) + " is too large");
  }
  return OkStatus();
}

Status CheckReduceArgs(const char* fn, const char* dst_name, void* const* dsts, int ndst,
                       const void* const* srcs, int nsrc, size_t count, DataType type, RedOp op) {
  TUTTI_RETURN_IF_ERROR(CheckType(fn, type));
  TUTTI_RETURN_IF_ERROR(CheckElementwiseOp(fn, op));
  if (!OpTakesType(op, type))
    return ArgError(fn, std::string("op ") + RedOpName(op) + " needs an integer type, not " + DataTypeName(type));
  TUTTI_RETURN_IF_ERROR(CheckCount(fn, count, type));
  if (nsrc < 1) return ArgError(fn, "need at least one source (n = " + std::to_string(nsrc) + ")");
  if (ndst < 1)
    return ArgError(fn, "need at least one destination (ndst = " + std::to_string(ndst) + ")");
  if (count == 0) return OkStatus();
  if (srcs == nullptr) return ArgError(fn, "srcs is null (count " + std::to_string(count) + ")");
  if (dsts == nullptr) return ArgError(fn, "dsts is null (count " + std::to_string(count) + ")");
  for (int k = 0; k < nsrc; ++k) {
    TUTTI_RETURN_IF_ERROR(CheckPointer(fn, "srcs", k, srcs[k], count, type));
  }
  const bool indexed = std::strcmp(dst_name, "dst") != 0;
  const size_t bytes = count * DataTypeSize(type);
  for (int j = 0; j < ndst; ++j) {
    TUTTI_RETURN_IF_ERROR(CheckPointer(fn, dst_name, indexed ? j : -1, dsts[j], count, type));
    for (int k = 0; k < nsrc; ++k) {
      if (PartiallyOverlap(dsts[j], srcs[k], bytes)) {
        return ArgError(fn, Label(dst_name, indexed ? j : -1) + " partially overlaps " + Label("srcs", k));
      }
    }
    for (int i = 0; i < j; ++i) {
      if (PartiallyOverlap(dsts[j], dsts[i], bytes)) {
        return ArgError(fn, Label(dst_name, indexed ? j : -1) + " partially overlaps " + Label(dst_name, i));
      }
    }
  }
  return OkStatus();
}

}  // namespace tutti::kernels
