// Runs on a GPU machine; without a usable device every test skips with the runtime's reason.
#include "kernels/cuda/device.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <vector>

namespace tutti::cuda {
namespace {

class Cuda : public ::testing::Test {
 protected:
  void SetUp() override {
    auto n = DeviceCount();
    if (!n.ok()) GTEST_SKIP() << "no usable CUDA device: " << n.status().message();
  }
};

TEST_F(Cuda, DeviceQuery) {
  auto info = GetDeviceInfo(0);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_FALSE(info->name.empty());
  EXPECT_GT(info->memory_bytes, 0u);
  EXPECT_GT(info->multiprocessors, 0);
  printf("device 0: %s, sm_%d%d, %zu MiB, %d SMs\n", info->name.c_str(), info->major, info->minor,
         info->memory_bytes >> 20, info->multiprocessors);
}

TEST_F(Cuda, CopyKernelAlignedAndNot) {
  const size_t n = (size_t{64} << 20) + 13;
  std::vector<unsigned char> host(n), back(n);
  for (size_t i = 0; i < n; ++i) host[i] = static_cast<unsigned char>(i * 131 + 7);
  char *src = nullptr, *dst = nullptr;
  ASSERT_EQ(cudaMalloc(&src, n + 16), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dst, n + 16), cudaSuccess);
  for (size_t offset : {size_t{0}, size_t{3}}) {  // 16-byte aligned, then misaligned
    ASSERT_EQ(cudaMemcpy(src + offset, host.data(), n, cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(cudaMemset(dst, 0, n + 16), cudaSuccess);
    Status st = CopyOnDevice(dst + offset, src + offset, n);
    ASSERT_TRUE(st.ok()) << st.ToString();
    ASSERT_EQ(cudaMemcpy(back.data(), dst + offset, n, cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(host, back) << "offset " << offset;
  }
  cudaFree(src);
  cudaFree(dst);
}

}  // namespace
}  // namespace tutti::cuda
