// The argument checks of the CPU kernels: every misuse is a clear kInvalidArgument.
#include <gtest/gtest.h>

#include <string>

#include "kernels/cpu/reduce.h"

namespace tutti::kernels {
namespace {

void ExpectInvalid(const Status& st, const std::string& fragment) {
  EXPECT_EQ(st.code(), Code::kInvalidArgument) << st.ToString();
  EXPECT_NE(st.message().find(fragment), std::string::npos)
      << "message \"" << st.message() << "\" lacks \"" << fragment << "\"";
}

TEST(ReduceArgs, SourceCountMustBePositive) {
  float a[4] = {}, d[4];
  const void* srcs[1] = {a};
  ExpectInvalid(ReduceN(d, srcs, 0, 4, DataType::kFloat32, RedOp::kSum), "at least one source");
  ExpectInvalid(ReduceN(d, srcs, -3, 4, DataType::kFloat32, RedOp::kSum), "n = -3");
  ExpectInvalid(ReduceN(d, srcs, 0, 0, DataType::kFloat32, RedOp::kSum), "at least one source");
  void* dsts[1] = {d};
  ExpectInvalid(ReduceCopyN(dsts, 1, srcs, 0, 4, DataType::kFloat32, RedOp::kSum), "source");
  ExpectInvalid(ReduceCopyN(dsts, 0, srcs, 1, 4, DataType::kFloat32, RedOp::kSum), "destination");
}

TEST(ReduceArgs, NullPointersWithData) {
  float a[4] = {}, b[4] = {}, d[4];
  const void* srcs[2] = {a, b};
  const void* with_null[2] = {a, nullptr};
  ExpectInvalid(ReduceN(nullptr, srcs, 2, 4, DataType::kFloat32, RedOp::kSum), "dst is null");
  ExpectInvalid(ReduceN(d, nullptr, 2, 4, DataType::kFloat32, RedOp::kSum), "srcs is null");
  ExpectInvalid(ReduceN(d, with_null, 2, 4, DataType::kFloat32, RedOp::kSum), "srcs[1] is null");
  void* dsts[2] = {d, nullptr};
  ExpectInvalid(ReduceCopyN(dsts, 2, srcs, 2, 4, DataType::kFloat32, RedOp::kSum),
                "dsts[1] is null");
  ExpectInvalid(ReduceCopyN(nullptr, 2, srcs, 2, 4, DataType::kFloat32, RedOp::kSum),
                "dsts is null");
  ExpectInvalid(ScaleBy(nullptr, a, 4, DataType::kFloat32, 2.0), "dst is null");
  ExpectInvalid(ScaleBy(d, nullptr, 4, DataType::kFloat32, 2.0), "src is null");
  // Nothing to do: null is fine.
  EXPECT_TRUE(ReduceN(nullptr, with_null, 2, 0, DataType::kFloat32, RedOp::kSum).ok());
  EXPECT_TRUE(ReduceN(nullptr, nullptr, 2, 0, DataType::kFloat32, RedOp::kSum).ok());
  EXPECT_TRUE(ScaleBy(nullptr, nullptr, 0, DataType::kFloat32, 2.0).ok());
}

TEST(ReduceArgs, AvgAndPremulSumAreNotElementwise) {
  float a[2] = {}, d[2];
  const void* srcs[1] = {a};
  ExpectInvalid(ReduceN(d, srcs, 1, 2, DataType::kFloat32, RedOp::kAvg), "op avg");
  ExpectInvalid(ReduceN(d, srcs, 1, 2, DataType::kFloat32, RedOp::kPremulSum), "op premul_sum");
  ExpectInvalid(ReduceN(d, srcs, 1, 0, DataType::kFloat32, RedOp::kAvg), "ScaleBy / DivideBy");
  void* dsts[1] = {d};
  ExpectInvalid(ReduceCopyN(dsts, 1, srcs, 1, 2, DataType::kFloat32, RedOp::kAvg), "op avg");
  ExpectInvalid(ReduceN(d, srcs, 1, 2, DataType::kFloat32, static_cast<RedOp>(17)),
                "unknown op 17");
}

TEST(ReduceArgs, UnknownType) {
  float a[2] = {}, d[2];
  const void* srcs[1] = {a};
  ExpectInvalid(ReduceN(d, srcs, 1, 2, static_cast<DataType>(12), RedOp::kSum),
                "unknown data type 12");
  ExpectInvalid(ScaleBy(d, a, 2, static_cast<DataType>(99), 1.0), "unknown data type");
}

TEST(ReduceArgs, MisalignedAndOverlapping) {
  alignas(8) float buf[16] = {};
  const void* srcs[2] = {buf, buf + 8};
  char* bytes = reinterpret_cast<char*>(buf);
  ExpectInvalid(ReduceN(bytes + 1, srcs, 2, 4, DataType::kFloat32, RedOp::kSum), "not aligned");
  const void* odd[2] = {buf, bytes + 2};
  ExpectInvalid(ReduceN(buf + 12, odd, 2, 4, DataType::kFloat32, RedOp::kSum),
                "srcs[1] is not aligned");
  // dst overlapping the first source by two elements.
  ExpectInvalid(ReduceN(buf + 2, srcs, 2, 4, DataType::kFloat32, RedOp::kSum),
                "dst partially overlaps srcs[0]");
  EXPECT_TRUE(ReduceN(buf + 4, srcs, 2, 4, DataType::kFloat32, RedOp::kSum).ok());  // adjacent
  void* dsts[2] = {buf + 12, buf + 13};
  ExpectInvalid(ReduceCopyN(dsts, 2, srcs, 2, 2, DataType::kFloat32, RedOp::kSum),
                "dsts[1] partially overlaps dsts[0]");
  ExpectInvalid(ScaleBy(buf + 1, buf, 4, DataType::kFloat32, 2.0), "partially overlaps");
  ExpectInvalid(ScaleBy(bytes + 2, buf, 1, DataType::kFloat32, 2.0), "not aligned");
}

}  // namespace
}  // namespace tutti::kernels
