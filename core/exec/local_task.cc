#include "core/exec/local_task.h"

namespace tutti::exec {

LocalTask LocalTask::Copy(void* dst, const void* src, size_t count, DataType type) {
  LocalTask t;
  t.kind = Kind::kCopy;
  t.type = type;
  t.nsrc = 1;
  t.dst = dst;
  t.srcs[0] = src;
  t.count = count;
  return t;
}

LocalTask LocalTask::Reduce(void* dst, const void* const* srcs, int n, size_t count, DataType type, RedOp op) {
  LocalTask t;
  t.kind = Kind::kReduce;
  t.type = type;
  t.op = op;
  t.nsrc = n < 0 ? 0 : n > kMaxSrcs ? kMaxSrcs + 1 : n;  // out of range: refused when run
  t.dst = dst;
  for (int i = 0; i < n && i < kMaxSrcs; ++i) t.srcs[i] = srcs[i];
  t.count = count;
  return t;
}

LocalTask LocalTask::Scale(void* dst, const void* src, size_t count, DataType type, double scalar) {
  LocalTask t = Copy(dst, src, count, type);
  t.kind = Kind::kScale;
  t.scalar = scalar;
  return t;
}

LocalTask LocalTask::Divide(void* buf, size_t count, DataType type, int64_t divisor) {
  LocalTask t;
  t.kind = Kind::kDivide;
  t.type = type;
  t.dst = buf;
  t.count = count;
  t.divisor = divisor;
  return t;
}

std::string LocalTask::Describe() const {
  std::string what;
  switch (kind) {
    case Kind::kCopy: what = "copy"; break;
    case Kind::kReduce: what = std::string("reduce (") + RedOpName(op) + ") of " + std::to_string(nsrc); break;
    case Kind::kScale: what = "scale by " + std::to_string(scalar) + " of"; break;
    case Kind::kDivide: what = "divide by " + std::to_string(divisor) + " of"; break;
  }
  return what + " " + DataTypeName(type) + " x " + std::to_string(count);
}

Status CopyBytes(const LocalTask& t, size_t* bytes) {
  *bytes = 0;
  const size_t elem = DataTypeSize(t.type);
  if (elem == 0) return InvalidArgument("copy: unknown data type " + std::to_string(static_cast<int>(t.type)));
  if (t.count == 0 || t.dst == t.srcs[0]) return OkStatus();
  if (t.dst == nullptr || t.srcs[0] == nullptr) return InvalidArgument(t.Describe() + ": null pointer");
  *bytes = t.count * elem;
  return OkStatus();
}

}  // namespace tutti::exec
