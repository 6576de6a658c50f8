#include "core/base/dtype.h"

#include <gtest/gtest.h>

namespace tutti {
namespace {

TEST(DataType, NamesRoundTrip) {
  const char* expected[kNumDataTypes] = {"int8",    "uint8",   "int32",    "uint32",
                                         "int64",   "uint64",  "float16",  "bfloat16",
                                         "float32", "float64", "fp8_e4m3", "fp8_e5m2"};
  for (int i = 0; i < kNumDataTypes; ++i) {
    const DataType t = static_cast<DataType>(i);
    EXPECT_STREQ(DataTypeName(t), expected[i]);
    DataType parsed = DataType::kInt8;
    ASSERT_TRUE(ParseDataType(DataTypeName(t), &parsed)) << DataTypeName(t);
    EXPECT_EQ(parsed, t);
  }
  EXPECT_STREQ(DataTypeName(static_cast<DataType>(200)), "unknown");
}

TEST(DataType, NcclTestsSpellings) {
  struct {
    const char* name;
    DataType type;
  } cases[] = {
      {"int8", DataType::kInt8},         {"uint8", DataType::kUint8},
      {"int32", DataType::kInt32},       {"uint32", DataType::kUint32},
      {"int64", DataType::kInt64},       {"uint64", DataType::kUint64},
      {"half", DataType::kFloat16},      {"float16", DataType::kFloat16},
      {"bfloat16", DataType::kBfloat16}, {"float", DataType::kFloat32},
      {"float32", DataType::kFloat32},   {"double", DataType::kFloat64},
      {"float64", DataType::kFloat64},   {"f8e4m3", DataType::kFp8E4M3},
      {"f8e5m2", DataType::kFp8E5M2},    {"FLOAT", DataType::kFloat32},
      {"BF16", DataType::kBfloat16},     {"fp16", DataType::kFloat16},
  };
  for (const auto& c : cases) {
    DataType parsed = DataType::kUint64;
    ASSERT_TRUE(ParseDataType(c.name, &parsed)) << c.name;
    EXPECT_EQ(parsed, c.type) << c.name;
  }
}

TEST(DataType, RejectsUnknownAndLeavesOutputAlone) {
  DataType t = DataType::kUint8;
  for (const char* bad : {"", "int16", "float322", " float", "fp8", "floa", "int8 "}) {
    EXPECT_FALSE(ParseDataType(bad, &t)) << bad;
    EXPECT_EQ(t, DataType::kUint8);
  }
  EXPECT_FALSE(ParseDataType(nullptr, &t));
  ASSERT_TRUE(ParseDataType("int", &t));
  EXPECT_EQ(t, DataType::kInt32);
}

TEST(RedOp, NamesRoundTrip) {
  const char* expected[kNumRedOps] = {"sum", "prod", "min", "max", "avg", "premul_sum", "band", "bor", "bxor"};
  for (int i = 0; i < kNumRedOps; ++i) {
    const RedOp op = static_cast<RedOp>(i);
    EXPECT_STREQ(RedOpName(op), expected[i]);
    RedOp parsed = RedOp::kMax;
    ASSERT_TRUE(ParseRedOp(RedOpName(op), &parsed));
    EXPECT_EQ(parsed, op);
  }
  EXPECT_STREQ(RedOpName(static_cast<RedOp>(99)), "unknown");
}

TEST(RedOp, BitwiseOpsTakeIntegerTypesOnly) {
  for (int t = 0; t < kNumDataTypes; ++t) {
    const DataType type = static_cast<DataType>(t);
    for (int o = 0; o < kNumRedOps; ++o) {
      const RedOp op = static_cast<RedOp>(o);
      EXPECT_EQ(OpTakesType(op, type), !(IsBitwise(op) && IsFloatingPoint(type))) << RedOpName(op) << " " << DataTypeName(type);
    }
  }
  EXPECT_TRUE(OpTakesType(RedOp::kBxor, DataType::kUint8));
  EXPECT_FALSE(OpTakesType(RedOp::kBand, DataType::kBfloat16));
}

TEST(RedOp, AliasesAndErrors) {
  RedOp op = RedOp::kSum;
  ASSERT_TRUE(ParseRedOp("PROD", &op));
  EXPECT_EQ(op, RedOp::kProd);
  ASSERT_TRUE(ParseRedOp("mean", &op));
  EXPECT_EQ(op, RedOp::kAvg);
  ASSERT_TRUE(ParseRedOp("premulsum", &op));
  EXPECT_EQ(op, RedOp::kPremulSum);
  EXPECT_FALSE(ParseRedOp("add", &op));
  EXPECT_FALSE(ParseRedOp("", &op));
  EXPECT_FALSE(ParseRedOp(nullptr, &op));
  EXPECT_EQ(op, RedOp::kPremulSum);
}

}  // namespace
}  // namespace tutti
