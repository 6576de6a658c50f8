// The CUDA reduction kernel against the CPU kernel, bit for bit (NaN payloads of arithmetic
// results aside). Without a usable device the device tests skip with the runtime's reason; the
// argument checks run everywhere, since they return before touching the device.
#include "kernels/cuda/reduce.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstring>
#include <deque>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/reduce.h"
#include "kernels/cpu/reduce_reference.h"
#include "kernels/cuda/device.h"

namespace tutti::cuda {
namespace {

namespace ref = kernels::testing;

constexpr DataType kAllTypes[] = {DataType::kInt8,    DataType::kUint8,    DataType::kInt32,
                                  DataType::kUint32,  DataType::kInt64,    DataType::kUint64,
                                  DataType::kFloat16, DataType::kBfloat16, DataType::kFloat32,
                                  DataType::kFloat64, DataType::kFp8E4M3,  DataType::kFp8E5M2};
// The element-wise ops a type takes: sum, prod, min, max, and band/bor/bxor for integer types.
std::vector<RedOp> OpsFor(DataType t) {
  std::vector<RedOp> ops;
  for (RedOp op : {RedOp::kSum, RedOp::kProd, RedOp::kMin, RedOp::kMax, RedOp::kBand, RedOp::kBor, RedOp::kBxor})
    if (OpTakesType(op, t)) ops.push_back(op);
  return ops;
}

TEST(CudaReduceArgs, RejectedBeforeTouchingTheDevice) {
  float a[4] = {}, d[4];
  const void* srcs[2] = {a, a};
  const auto f32 = DataType::kFloat32;
  EXPECT_EQ(ReduceN(d, srcs, 0, 4, f32, RedOp::kSum).code(), Code::kInvalidArgument);
  EXPECT_EQ(ReduceN(d, srcs, 2, 4, f32, RedOp::kAvg).code(), Code::kInvalidArgument);
  EXPECT_EQ(ReduceN(d, srcs, 2, 4, f32, RedOp::kBxor).code(), Code::kInvalidArgument);  // integers only
  EXPECT_EQ(ReduceN(nullptr, srcs, 2, 4, f32, RedOp::kSum).code(), Code::kInvalidArgument);
  EXPECT_EQ(ReduceN(reinterpret_cast<char*>(d) + 1, srcs, 2, 4, f32, RedOp::kSum).code(),
            Code::kInvalidArgument);
  EXPECT_TRUE(ReduceN(nullptr, nullptr, 2, 0, f32, RedOp::kSum).ok());
}

class CudaReduce : public ::testing::Test {
 protected:
  void SetUp() override {
    auto n = DeviceCount();
    if (!n.ok()) GTEST_SKIP() << "no usable CUDA device: " << n.status().message();
  }
};

// v in type t (narrow floats through the reference encoder, not the kernels' conversion).
uint64_t Encode(double v, DataType t) {
  if (ref::IsNarrow(t)) return ref::EncoderFor(t)(v);
  if (t == DataType::kFloat32) {
    const float f = static_cast<float>(v);
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
  }
  if (t == DataType::kFloat64) {
    uint64_t u;
    std::memcpy(&u, &v, 8);
    return u;
  }
  return static_cast<uint64_t>(static_cast<int64_t>(v));
}

// Raw bit patterns (NaN, inf, subnormals, extremes) a quarter of the time, small values
// otherwise (so that sums and products stay interesting).
std::vector<uint8_t> RandomData(size_t count, DataType t, std::mt19937_64& rng) {
  std::vector<uint8_t> buf(count * DataTypeSize(t));
  std::vector<uint64_t> small;
  for (int v = -8; v <= 8; ++v) small.push_back(Encode(IsFloatingPoint(t) ? v * 0.375 : v, t));
  for (size_t i = 0; i < count; ++i) {
    const uint64_t bits = rng() % 4 == 0 ? rng() : small[rng() % small.size()];
    ref::StoreBits(buf.data(), i, t, bits);
  }
  return buf;
}

// Device memory freed at scope exit.
struct DeviceBuffer {
  explicit DeviceBuffer(size_t bytes) { EXPECT_EQ(cudaMalloc(&ptr, bytes + 64), cudaSuccess); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { cudaFree(ptr); }
  char* ptr = nullptr;
};

enum class Placement { kAligned, kSharedMisalignment, kMixedMisalignment };

// Runs one case on the device and on the CPU and compares. Source k lives at byte offset
// off(k) of its allocation (cudaMalloc returns 256-byte aligned memory).
void CheckCase(DataType t, RedOp op, int n, size_t count, Placement placement, bool in_place,
               std::mt19937_64& rng) {
  const size_t size = DataTypeSize(t), bytes = count * size;
  auto offset = [&](int k) -> size_t {
    switch (placement) {
      case Placement::kAligned: return 0;
      case Placement::kSharedMisalignment: return size < 16 ? size : 0;
      case Placement::kMixedMisalignment: return (static_cast<size_t>(k + 1) * size) % 16;
    }
    return 0;
  };
  std::vector<std::vector<uint8_t>> host;
  std::deque<DeviceBuffer> dev;  // never moves its elements
  std::vector<const void*> host_ptrs, dev_ptrs;
  for (int k = 0; k < n; ++k) {
    host.push_back(RandomData(count, t, rng));
    dev.emplace_back(bytes);
    char* p = dev.back().ptr + offset(k);
    ASSERT_EQ(cudaMemcpy(p, host.back().data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
    host_ptrs.push_back(host.back().data());
    dev_ptrs.push_back(p);
  }
  dev.emplace_back(bytes);
  char* dst = in_place ? const_cast<char*>(static_cast<const char*>(dev_ptrs[0]))
                       : dev.back().ptr + offset(n);
  std::vector<uint8_t> want(bytes + 1), got(bytes + 1);
  ASSERT_TRUE(kernels::ReduceN(want.data(), host_ptrs.data(), n, count, t, op).ok());
  const Status st = ReduceN(dst, dev_ptrs.data(), n, count, t, op);
  ASSERT_TRUE(st.ok()) << st.ToString();
  ASSERT_EQ(cudaMemcpy(got.data(), dst, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
  for (size_t i = 0; i < count; ++i) {
    ASSERT_TRUE(ref::SameElement(got.data(), want.data(), i, t))
        << "element " << i << ": device 0x" << std::hex << ref::LoadBits(got.data(), i, t)
        << ", cpu 0x" << ref::LoadBits(want.data(), i, t);
  }
}

TEST_F(CudaReduce, MatchesCpuForEveryTypeOpAndPlacement) {
  std::mt19937_64 rng(31);
  for (DataType t : kAllTypes) {
    for (RedOp op : OpsFor(t)) {
      for (int n : {1, 2, 3, 5, 8, 17}) {  // 17: more sources than fit in kernel parameters
        for (size_t count : {0, 1, 7, 33, 1000, 4099}) {
          for (Placement pl : {Placement::kAligned, Placement::kSharedMisalignment,
                               Placement::kMixedMisalignment}) {
            SCOPED_TRACE(std::string(DataTypeName(t)) + " " + RedOpName(op) +
                         " n=" + std::to_string(n) + " count=" + std::to_string(count) +
                         " placement=" + std::to_string(static_cast<int>(pl)));
            CheckCase(t, op, n, count, pl, /*in_place=*/false, rng);
            if (HasFatalFailure()) return;
          }
        }
      }
    }
  }
}

TEST_F(CudaReduce, LargeAndInPlace) {
  std::mt19937_64 rng(37);
  for (DataType t : kAllTypes) {
    for (RedOp op : OpsFor(t)) {
      SCOPED_TRACE(std::string(DataTypeName(t)) + " " + RedOpName(op));
      CheckCase(t, op, 3, (size_t{1} << 20) + 5, Placement::kAligned, /*in_place=*/true, rng);
      if (HasFatalFailure()) return;
      CheckCase(t, op, 2, (size_t{1} << 20) + 5, Placement::kSharedMisalignment,
                /*in_place=*/false, rng);
      if (HasFatalFailure()) return;
    }
  }
}

TEST_F(CudaReduce, AsyncOnAStream) {
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  const size_t count = 10007;
  std::vector<float> a(count), b(count), out(count);
  for (size_t i = 0; i < count; ++i) {
    a[i] = static_cast<float>(i);
    b[i] = 0.5f;
  }
  DeviceBuffer da(count * 4), db(count * 4);
  ASSERT_EQ(cudaMemcpy(da.ptr, a.data(), count * 4, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(db.ptr, b.data(), count * 4, cudaMemcpyHostToDevice), cudaSuccess);
  const void* srcs[2] = {da.ptr, db.ptr};
  ASSERT_TRUE(ReduceNAsync(da.ptr, srcs, 2, count, DataType::kFloat32, RedOp::kSum, stream).ok());
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(out.data(), da.ptr, count * 4, cudaMemcpyDeviceToHost), cudaSuccess);
  for (size_t i = 0; i < count; ++i) ASSERT_EQ(out[i], static_cast<float>(i) + 0.5f) << i;
  cudaStreamDestroy(stream);
}

}  // namespace
}  // namespace tutti::cuda
