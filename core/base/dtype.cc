#include "core/base/dtype.h"

#include <cctype>
#include <cstring>

namespace tutti {

namespace {

struct Spelling {
  const char* name;
  int value;
};

// Canonical names first (DataTypeName returns the first spelling of each value), then the
// nccl-tests and PyTorch spellings.
constexpr Spelling kTypeNames[] = {
    {"int8", 0},
    {"uint8", 1},
    {"int32", 2},
    {"uint32", 3},
    {"int64", 4},
    {"uint64", 5},
    {"float16", 6},
    {"bfloat16", 7},
    {"float32", 8},
    {"float64", 9},
    {"fp8_e4m3", 10},
    {"fp8_e5m2", 11},
    // aliases
    {"char", 0},
    {"byte", 1},
    {"int", 2},
    {"uint", 3},
    {"long", 4},
    {"ulong", 5},
    {"half", 6},
    {"fp16", 6},
    {"f16", 6},
    {"bf16", 7},
    {"float", 8},
    {"fp32", 8},
    {"f32", 8},
    {"double", 9},
    {"fp64", 9},
    {"f64", 9},
    {"f8e4m3", 10},
    {"e4m3", 10},
    {"fp8e4m3", 10},
    {"float8_e4m3fn", 10},
    {"f8e5m2", 11},
    {"e5m2", 11},
    {"fp8e5m2", 11},
    {"float8_e5m2", 11},
};

constexpr Spelling kOpNames[] = {
    {"sum", 0},
    {"prod", 1},
    {"min", 2},
    {"max", 3},
    {"avg", 4},
    {"premul_sum", 5},
    {"band", 6},
    {"bor", 7},
    {"bxor", 8},
    // aliases
    {"product", 1},
    {"mean", 4},
    {"average", 4},
    {"premulsum", 5},
};

static_assert(sizeof(kTypeNames) / sizeof(kTypeNames[0]) >= kNumDataTypes);
static_assert(sizeof(kOpNames) / sizeof(kOpNames[0]) >= kNumRedOps);

// Case-insensitive equality of a NUL-terminated input with a lower-case name.
bool EqualsLower(const char* input, const char* name) {
  for (; *input && *name; ++input, ++name) {
    if (std::tolower(static_cast<unsigned char>(*input)) != *name) return false;
  }
  return *input == '\0' && *name == '\0';
}

template <size_t N>
const char* NameOf(const Spelling (&table)[N], int value) {
  for (const Spelling& s : table) {
    if (s.value == value) return s.name;
  }
  return "unknown";
}

template <size_t N>
bool Parse(const Spelling (&table)[N], const char* input, int* out) {
  if (input == nullptr) return false;
  for (const Spelling& s : table) {
    if (EqualsLower(input, s.name)) {
      *out = s.value;
      return true;
    }
  }
  return false;
}

}  // namespace

const char* DataTypeName(DataType t) { return NameOf(kTypeNames, static_cast<int>(t)); }

const char* RedOpName(RedOp op) { return NameOf(kOpNames, static_cast<int>(op)); }

bool ParseDataType(const char* name, DataType* out) {
  int v = 0;
  if (!Parse(kTypeNames, name, &v)) return false;
  *out = static_cast<DataType>(v);
  return true;
}

bool ParseRedOp(const char* name, RedOp* out) {
  int v = 0;
  if (!Parse(kOpNames, name, &v)) return false;
  *out = static_cast<RedOp>(v);
  return true;
}

}  // namespace tutti
