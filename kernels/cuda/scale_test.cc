// The CUDA scale and divide kernels against the CPU ones, bit for bit. Argument checks run
// everywhere; the device cases skip without a usable device.
#include "kernels/cuda/scale.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

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

TEST(CudaScaleArgs, RejectedBeforeTouchingTheDevice) {
  int32_t a[4] = {};
  EXPECT_EQ(ScaleByAsync(a, a, 4, DataType::kInt32, 0.5, nullptr).code(), Code::kInvalidArgument);
  EXPECT_EQ(ScaleByAsync(a, a, 0, DataType::kUint8, -1, nullptr).code(), Code::kInvalidArgument);
  EXPECT_EQ(ScaleByAsync(nullptr, a, 4, DataType::kInt32, 2, nullptr).code(), Code::kInvalidArgument);
  EXPECT_EQ(ScaleByAsync(a, a, 4, static_cast<DataType>(99), 2, nullptr).code(), Code::kInvalidArgument);
  EXPECT_TRUE(ScaleByAsync(nullptr, nullptr, 0, DataType::kFloat32, 0.5, nullptr).ok());
  EXPECT_EQ(DivideByAsync(a, 4, DataType::kInt32, 0, nullptr).code(), Code::kInvalidArgument);
  EXPECT_EQ(DivideByAsync(nullptr, 4, DataType::kInt32, 2, nullptr).code(), Code::kInvalidArgument);
  EXPECT_TRUE(DivideByAsync(nullptr, 0, DataType::kInt32, 2, nullptr).ok());
}

class CudaScale : public ::testing::Test {
 protected:
  void SetUp() override {
    auto n = DeviceCount();
    if (!n.ok()) GTEST_SKIP() << "no usable CUDA device: " << n.status().message();
  }
};

// Random bit patterns half the time (NaN, inf, subnormals, extremes), small whole values else.
std::vector<uint8_t> RandomData(size_t count, DataType t, std::mt19937_64& rng) {
  std::vector<uint8_t> buf(count * DataTypeSize(t) + 1);
  for (size_t i = 0; i < count; ++i) {
    uint64_t bits = rng();
    if (rng() % 2 == 0 && !IsFloatingPoint(t)) bits = static_cast<uint64_t>(static_cast<int64_t>(rng() % 200) - 100);
    ref::StoreBits(buf.data(), i, t, bits);
  }
  return buf;
}

void ExpectSame(const std::vector<uint8_t>& got, const std::vector<uint8_t>& want, size_t count, DataType t) {
  for (size_t i = 0; i < count; ++i)
    ASSERT_TRUE(ref::SameElement(got.data(), want.data(), i, t))
        << "element " << i << ": device 0x" << std::hex << ref::LoadBits(got.data(), i, t) << ", cpu 0x"
        << ref::LoadBits(want.data(), i, t);
}

TEST_F(CudaScale, ScaleAndDivideMatchCpuForEveryType) {
  std::mt19937_64 rng(41);
  void* dev = nullptr;
  const size_t max_count = (size_t{1} << 20) + 3;
  ASSERT_EQ(cudaMalloc(&dev, max_count * 8 * 2), cudaSuccess);
  char* src = static_cast<char*>(dev);
  char* dst = src + max_count * 8;
  for (DataType t : kAllTypes) {
    const size_t size = DataTypeSize(t);
    for (size_t count : {size_t{1}, size_t{7}, size_t{1000}, max_count}) {
      const std::vector<uint8_t> in = RandomData(count, t, rng);
      const size_t bytes = count * size;
      const std::vector<double> scalars =
          IsFloatingPoint(t) ? std::vector<double>{0.37, -1.5, 3.0, 1e30} : std::vector<double>{3, 0, 7};
      for (double scalar : scalars) {
        SCOPED_TRACE(std::string(DataTypeName(t)) + " count " + std::to_string(count) + " scale " + std::to_string(scalar));
        std::vector<uint8_t> want(bytes + 1), got(bytes + 1);
        ASSERT_TRUE(kernels::ScaleBy(want.data(), in.data(), count, t, scalar).ok());
        ASSERT_EQ(cudaMemcpy(src, in.data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
        ASSERT_TRUE(ScaleByAsync(dst, src, count, t, scalar, nullptr).ok());
        ASSERT_EQ(cudaMemcpy(got.data(), dst, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
        ExpectSame(got, want, count, t);
        if (HasFatalFailure()) break;
      }
      for (int64_t n : {2, 3, 7, 1000}) {
        SCOPED_TRACE(std::string(DataTypeName(t)) + " count " + std::to_string(count) + " divide " + std::to_string(n));
        std::vector<uint8_t> want = in, got(bytes + 1);
        ASSERT_TRUE(kernels::DivideBy(want.data(), count, t, n).ok());
        ASSERT_EQ(cudaMemcpy(src, in.data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
        ASSERT_TRUE(DivideByAsync(src, count, t, n, nullptr).ok());
        ASSERT_EQ(cudaMemcpy(got.data(), src, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
        ExpectSame(got, want, count, t);
        if (HasFatalFailure()) break;
      }
      if (HasFatalFailure()) break;
    }
  }
  cudaFree(dev);
}

}  // namespace
}  // namespace tutti::cuda
