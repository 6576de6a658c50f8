// On a GPU machine: what the memory probe says of cudaMalloc / cudaHostAlloc /
// cudaMallocManaged / malloc memory, that registration keeps it, that collectives run on device
// memory (the device path) as on pinned and managed memory, and that point-to-point calls refuse
// device memory with a clear error. Without a usable device every test skips with the runtime's
// reason.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#include "core/communicator.h"
#include "core/mem/registration_cache.h"
#include "core/mem/mem_kind.h"
#include "core/store/in_memory_store.h"
#include "kernels/cuda/device.h"

namespace tutti {
namespace {

class CudaMemory : public ::testing::Test {
 protected:
  void SetUp() override {
    auto n = cuda::DeviceCount();
    if (!n.ok()) GTEST_SKIP() << "no usable CUDA device: " << n.status().message();
  }
};

TEST_F(CudaMemory, ProbeKnowsEveryKind) {
  const MemoryProbe& probe = SystemMemoryProbe();
  ASSERT_TRUE(probe.knows_devices()) << "a device works but the driver probe did not load";
  void *d = nullptr, *h = nullptr, *m = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 1 << 20), cudaSuccess);
  ASSERT_EQ(cudaHostAlloc(&h, 1 << 20, cudaHostAllocDefault), cudaSuccess);
  ASSERT_EQ(cudaMallocManaged(&m, 1 << 20), cudaSuccess);
  std::vector<char> p(1 << 20);
  MemInfo di = probe.Probe(static_cast<char*>(d) + 4096);
  EXPECT_EQ(di.kind, MemKind::kCudaDevice) << Describe(di);
  EXPECT_EQ(di.device, 0);
  EXPECT_NE(di.buffer_id, 0u);
  EXPECT_EQ(probe.Probe(h).kind, MemKind::kPinnedHost) << Describe(probe.Probe(h));
  EXPECT_EQ(probe.Probe(m).kind, MemKind::kCudaManaged) << Describe(probe.Probe(m));
  EXPECT_EQ(probe.Probe(p.data()).kind, MemKind::kHost);
  cudaFree(d);
  cudaFreeHost(h);
  cudaFree(m);
}

TEST_F(CudaMemory, CollectivesRunOnEveryKindAndP2PRefusesDeviceMemory) {
  auto comm = Communicator::Create(std::make_shared<InMemoryStore>(), 0, 1);
  ASSERT_TRUE(comm.ok()) << comm.status().ToString();
  Communicator& c = **comm;
  const size_t n = 1000;
  void *d = nullptr, *h = nullptr, *m = nullptr;
  ASSERT_EQ(cudaMalloc(&d, n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaHostAlloc(&h, n * sizeof(float), cudaHostAllocDefault), cudaSuccess);
  ASSERT_EQ(cudaMallocManaged(&m, n * sizeof(float)), cudaSuccess);
  std::vector<float> ones(n, 1.0f), back(n);
  ASSERT_EQ(cudaMemcpy(d, ones.data(), n * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
  Status st = c.AllReduce(d, d, n, DataType::kFloat32, RedOp::kAvg);
  ASSERT_TRUE(st.ok()) << st.ToString();
  ASSERT_EQ(cudaMemcpy(back.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(back[n - 1], 1.0f);
  st = c.Send(d, 16, 0, 1, 1.0);
  EXPECT_EQ(st.code(), Code::kInvalidArgument) << st.ToString();
  EXPECT_NE(st.message().find("cuda device 0"), std::string::npos) << st.ToString();
  auto reg = c.Register(d, n * sizeof(float));
  ASSERT_TRUE(reg.ok());
  EXPECT_EQ((*reg)->mem.kind, MemKind::kCudaDevice);
  EXPECT_EQ(c.MemoryOf(d, 16).kind, MemKind::kCudaDevice);
  ASSERT_TRUE(c.Deregister(*reg).ok());
  for (void* buf : {h, m}) {
    float* f = static_cast<float*>(buf);
    for (size_t i = 0; i < n; ++i) f[i] = static_cast<float>(i);
    ASSERT_TRUE(c.AllReduce(f, f, n, DataType::kFloat32, RedOp::kSum).ok());
    EXPECT_EQ(f[999], 999.0f);
  }
  cudaFree(d);
  cudaFreeHost(h);
  cudaFree(m);
}

}  // namespace
}  // namespace tutti
