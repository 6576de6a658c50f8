// The CUDA engine: without a device, Create says why; with one, tasks run in order on the
// stream, tickets complete through events, results equal the CPU engine's bit for bit, and a
// failed task is reported for its ticket only.
#include "core/exec/cuda_engine.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "core/exec/cpu_engine.h"

namespace tutti::exec {
namespace {

bool HaveDevice(std::string* why) {
  int n = 0;
  const cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess || n == 0) {
    *why = err != cudaSuccess ? cudaGetErrorString(err) : "no device";
    return false;
  }
  return true;
}

TEST(CudaEngine, WithoutADeviceCreateSaysWhy) {
  std::string why;
  if (HaveDevice(&why)) GTEST_SKIP() << "a device is present";
  auto e = CudaEngine::Create(0);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), Code::kUnavailable);
  EXPECT_NE(e.status().message().find("no usable device"), std::string::npos) << e.status().ToString();
}

class CudaEngineOnDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!HaveDevice(&why)) GTEST_SKIP() << "no usable CUDA device: " << why;
    auto e = CudaEngine::Create(0);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    engine_ = std::move(*e);
  }
  std::unique_ptr<CudaEngine> engine_;
};

TEST_F(CudaEngineOnDevice, BadDeviceIsRefused) {
  EXPECT_EQ(CudaEngine::Create(1 << 20).status().code(), Code::kInvalidArgument);
}

// The same chain of dependent tasks on both engines: c = a; c = a + b + c; c *= s; c /= 3.
template <class T>
void ChainMatchesCpu(CudaEngine& gpu, DataType type, double scalar) {
  const size_t n = (size_t{1} << 18) + 11;
  std::mt19937_64 rng(5);
  std::vector<T> a(n), b(n), want(n), got(n);
  for (size_t i = 0; i < n; ++i) {
    a[i] = static_cast<T>(static_cast<int64_t>(rng() % 2001) - 1000) / static_cast<T>(7);
    b[i] = static_cast<T>(static_cast<int64_t>(rng() % 2001) - 1000);
  }
  char* dev = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&dev), 3 * n * sizeof(T)), cudaSuccess);
  T* da = reinterpret_cast<T*>(dev);
  T* db = da + n;
  T* dc = db + n;
  ASSERT_EQ(cudaMemcpy(da, a.data(), n * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(db, b.data(), n * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);

  auto chain = [&](LocalEngine& e, const T* pa, const T* pb, T* pc) {
    std::vector<uint64_t> t;
    t.push_back(*e.Post(LocalTask::Copy(pc, pa, n, type)));
    const void* srcs[3] = {pa, pb, pc};
    t.push_back(*e.Post(LocalTask::Reduce(pc, srcs, 3, n, type, RedOp::kSum)));
    t.push_back(*e.Post(LocalTask::Scale(pc, pc, n, type, scalar)));
    t.push_back(*e.Post(LocalTask::Divide(pc, n, type, 3)));
    return t;
  };
  CpuEngine cpu;
  auto ct = chain(cpu, a.data(), b.data(), want.data());
  ASSERT_TRUE(cpu.Wait(ct.front(), ct.back(), 10).ok());
  auto gt = chain(gpu, da, db, dc);
  for (size_t i = 1; i < gt.size(); ++i) EXPECT_GT(gt[i], gt[i - 1]);
  Status st = gpu.Wait(gt.front(), gt.back(), 60);
  ASSERT_TRUE(st.ok()) << st.ToString();
  ASSERT_EQ(cudaMemcpy(got.data(), dc, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(std::memcmp(got.data(), want.data(), n * sizeof(T)), 0);
  cudaFree(dev);
}

TEST_F(CudaEngineOnDevice, ChainsMatchTheCpuEngine) {
  ChainMatchesCpu<float>(*engine_, DataType::kFloat32, 0.37);
  ChainMatchesCpu<double>(*engine_, DataType::kFloat64, -1.25);
  ChainMatchesCpu<int32_t>(*engine_, DataType::kInt32, 3);
  ChainMatchesCpu<int64_t>(*engine_, DataType::kInt64, -2);
}

TEST_F(CudaEngineOnDevice, AFailedTaskIsReportedForItsTicketOnly) {
  float* d = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d), 64 * sizeof(float)), cudaSuccess);
  const void* srcs[2] = {d, d + 32};
  uint64_t ok1 = *engine_->Post(LocalTask::Reduce(d, srcs, 2, 32, DataType::kFloat32, RedOp::kSum));
  uint64_t bad = *engine_->Post(LocalTask::Reduce(d, srcs, 2, 32, DataType::kFloat32, RedOp::kAvg));
  uint64_t ok2 = *engine_->Post(LocalTask::Divide(d, 32, DataType::kFloat32, 2));
  EXPECT_EQ(engine_->Wait(ok1, ok2, 60).code(), Code::kInvalidArgument);
  Status st;
  ASSERT_TRUE(engine_->Test(ok1, ok1, &st));
  EXPECT_TRUE(st.ok()) << st.ToString();
  ASSERT_TRUE(engine_->Test(ok2, ok2, &st));
  EXPECT_TRUE(st.ok()) << st.ToString();
  ASSERT_TRUE(engine_->Test(bad, bad, &st));
  EXPECT_NE(st.message().find("cuda::ReduceN"), std::string::npos) << st.ToString();
  cudaFree(d);
}

TEST_F(CudaEngineOnDevice, ManyTicketsOnACallersStream) {
  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
  {
    auto e = CudaEngine::Create(0, s);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    EXPECT_EQ((*e)->stream(), static_cast<void*>(s));
    int32_t* d = nullptr;
    ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d), 1024 * sizeof(int32_t)), cudaSuccess);
    ASSERT_EQ(cudaMemset(d, 0, 1024 * sizeof(int32_t)), cudaSuccess);
    std::vector<int32_t> ones(1024, 1);
    int32_t* o = nullptr;
    ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&o), 1024 * sizeof(int32_t)), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(o, ones.data(), 1024 * sizeof(int32_t), cudaMemcpyHostToDevice), cudaSuccess);
    uint64_t first = 0, last = 0;
    for (int i = 0; i < 1000; ++i) {
      const void* srcs[2] = {d, o};
      last = *(*e)->Post(LocalTask::Reduce(d, srcs, 2, 1024, DataType::kInt32, RedOp::kSum));
      if (i == 0) first = last;
    }
    ASSERT_TRUE((*e)->Wait(first, last, 60).ok());
    std::vector<int32_t> got(1024);
    ASSERT_EQ(cudaMemcpy(got.data(), d, 1024 * sizeof(int32_t), cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(got[0], 1000);
    EXPECT_EQ(got[1023], 1000);
    cudaFree(d);
    cudaFree(o);
  }
  cudaStreamDestroy(s);
}

}  // namespace
}  // namespace tutti::exec
