// On a GPU: every collective on device memory gives the same bits as the same call on host
// memory, for several types and ops, 2 and 3 ranks sharing one GPU, through both device paths:
// the fused kernels (one per rank, over connections in device memory; the default) and the
// staged path (TUTTI_FUSED=0: our kernels on the device, messages through page-locked host
// memory). Without a usable device every test skips with the runtime's reason.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "kernels/cuda/device.h"
#include "tests/harness/thread_ranks.h"

namespace tutti {
namespace {

struct Case {
  std::string name;
  // in/out element counts for a world of n ranks and `count`.
  size_t in, out;
  std::function<Status(Communicator&, const void*, void*, size_t, DataType, RedOp, const CollOptions&)> call;
};

std::vector<Case> Cases(size_t n, size_t count) {
  return {
      {"all_reduce", count, count, [](Communicator& c, const void* s, void* r, size_t k, DataType t, RedOp op, const CollOptions& o) { return c.AllReduce(s, r, k, t, op, o); }},
      {"reduce_scatter", n * count, count, [](Communicator& c, const void* s, void* r, size_t k, DataType t, RedOp op, const CollOptions& o) { return c.ReduceScatter(s, r, k, t, op, o); }},
      {"all_gather", count, n * count, [](Communicator& c, const void* s, void* r, size_t k, DataType t, RedOp, const CollOptions& o) { return c.AllGather(s, r, k, t, o); }},
      {"reduce", count, count, [](Communicator& c, const void* s, void* r, size_t k, DataType t, RedOp op, const CollOptions& o) { return c.Reduce(s, r, k, t, op, 1 % c.size(), o); }},
      {"broadcast", count, count, [](Communicator& c, const void* s, void* r, size_t k, DataType t, RedOp, const CollOptions& o) { return c.Broadcast(s, r, k, t, 0, o); }},
      {"all_to_all", n * count, n * count, [](Communicator& c, const void* s, void* r, size_t k, DataType t, RedOp, const CollOptions& o) { return c.AllToAll(s, r, k, t, o); }},
      {"gather", count, n * count, [](Communicator& c, const void* s, void* r, size_t k, DataType t, RedOp, const CollOptions& o) { return c.Gather(s, r, k, t, 0, o); }},
      {"scatter", n * count, count, [](Communicator& c, const void* s, void* r, size_t k, DataType t, RedOp, const CollOptions& o) { return c.Scatter(s, r, k, t, 0, o); }},
  };
}

class CudaCollectives : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    auto n = cuda::DeviceCount();
    if (!n.ok()) GTEST_SKIP() << "no usable CUDA device: " << n.status().message();
    // The shared slots serve host memory only and combine all ranks' inputs at once; the device
    // path runs the selected schedule, whose pairwise steps round differently (fp8, bf16 with 3
    // ranks). The reference is the same schedule on host memory: no slots.
    setenv("TUTTI_SLOT_MAX", "0", 1);
  }
  void TearDown() override { unsetenv("TUTTI_SLOT_MAX"); }
};

TEST_P(CudaCollectives, DeviceBitsEqualHostBits) {
  const int nranks = GetParam();
  const DataType types[] = {DataType::kFloat32, DataType::kBfloat16, DataType::kInt32, DataType::kFp8E4M3,
                            DataType::kFloat64};
  const RedOp ops[] = {RedOp::kSum, RedOp::kMax, RedOp::kAvg, RedOp::kPremulSum};
  CommOptions o;
  o.timeout_s = 120;
  testing::RunThreadRanks(nranks, [&](Communicator& c) {
    std::mt19937_64 rng(100 + c.rank());
    for (size_t count : {size_t{1}, size_t{1000}, size_t{1} << 18}) {
      // Device buffers for the largest case, made before the calls and released after a
      // barrier: a cudaFree waits for every kernel on the device, and ranks that are threads of
      // one process share it (a peer's kernel may be waiting for this rank's next call).
      const size_t max_bytes = nranks * count * 8 + 16;
      void *din = nullptr, *dout = nullptr;
      ASSERT_EQ(cudaMalloc(&din, max_bytes), cudaSuccess);
      ASSERT_EQ(cudaMalloc(&dout, max_bytes), cudaSuccess);
      for (const Case& k : Cases(nranks, count)) {
        for (DataType t : types) {
          for (RedOp op : ops) {
            if (op != RedOp::kSum && (k.name == "broadcast" || k.name.find("gather") != std::string::npos ||
                                      k.name == "all_to_all" || k.name == "scatter"))
              continue;
            const size_t esz = DataTypeSize(t);
            std::vector<uint8_t> in(k.in * esz), host_out(k.out * esz, 0), dev_out(k.out * esz, 0);
            for (size_t i = 0; i < k.in; ++i) {
              // Small integers in every type (fp8 included) keep sums exact-ish but still typed.
              const int v = static_cast<int>(rng() % 7) - 3;
              if (t == DataType::kFloat32) { float f = v * 0.75f; std::memcpy(&in[i * esz], &f, esz); }
              else if (t == DataType::kFloat64) { double f = v * 0.375; std::memcpy(&in[i * esz], &f, esz); }
              else if (t == DataType::kInt32) { int32_t x = v; std::memcpy(&in[i * esz], &x, esz); }
              else if (t == DataType::kBfloat16) { uint16_t b = static_cast<uint16_t>(0x3f80 + (rng() % 64) - 32); std::memcpy(&in[i * esz], &b, esz); }
              else { in[i] = static_cast<uint8_t>(0x30 + rng() % 32); }
            }
            CollOptions co;
            co.premul_scalar = IsFloatingPoint(t) ? 0.5 + c.rank() : 1.0 + c.rank();
            co.nchannels = 2;  // both paths the same schedule (the fused path picks more channels by size)
            const std::string what = k.name + " " + DataTypeName(t) + " " + RedOpName(op) + " count " + std::to_string(count);
            Status st = k.call(c, in.data(), host_out.data(), count, t, op, co);
            ASSERT_TRUE(st.ok()) << what << " on host: " << st.ToString();
            ASSERT_EQ(cudaMemcpy(din, in.data(), in.size(), cudaMemcpyHostToDevice), cudaSuccess);
            ASSERT_EQ(cudaMemset(dout, 0, dev_out.size()), cudaSuccess);
            st = k.call(c, din, dout, count, t, op, co);
            ASSERT_TRUE(st.ok()) << what << " on device: " << st.ToString();
            ASSERT_EQ(cudaMemcpy(dev_out.data(), dout, dev_out.size(), cudaMemcpyDeviceToHost), cudaSuccess);
            ASSERT_EQ(std::memcmp(dev_out.data(), host_out.data(), dev_out.size()), 0)
                << "rank " << c.rank() << ": " << what << ": device and host results differ";
          }
        }
      }
      ASSERT_TRUE(c.Barrier().ok());
      cudaFree(din);
      cudaFree(dout);
    }
    c.Destroy();
  }, o);
}

INSTANTIATE_TEST_SUITE_P(Ranks, CudaCollectives, ::testing::Values(2, 3));

// Ranks that call all_reduce with the same count but different ops: the pieces carry the call
// trail, so the rank that receives one fails with kMismatch, and its CLOSE stops the peer's
// kernel, which names the same cause (not its timeout). LL and Simple sizes.
TEST(CudaFused, CallsThatDifferOnlyInTheOpFailOnEveryRankNamingTheMismatch) {
  auto n = cuda::DeviceCount();
  if (!n.ok()) GTEST_SKIP() << "no usable CUDA device: " << n.status().message();
  for (size_t count : {size_t{64}, size_t{100000}}) {
    CommOptions o;
    o.timeout_s = 60;
    testing::RunThreadRanks(2, [&](Communicator& c) {
      void* d = nullptr;
      ASSERT_EQ(cudaMalloc(&d, count * 4), cudaSuccess);
      ASSERT_EQ(cudaMemset(d, 0, count * 4), cudaSuccess);
      CollOptions co;
      co.timeout_s = 20;  // a peer that waited for it would not name the mismatch
      ASSERT_TRUE(c.AllReduce(d, d, count, DataType::kInt32, RedOp::kSum, co).ok());
      const Status st = c.AllReduce(d, d, count, DataType::kInt32, c.rank() == 0 ? RedOp::kSum : RedOp::kMax, co);
      EXPECT_FALSE(st.ok()) << "count " << count << ": rank " << c.rank() << " completed";
      EXPECT_NE(st.message().find("belongs to another call"), std::string::npos) << st.ToString();
      c.Destroy();
      cudaFree(d);
    }, o);
  }
}

// The staged path, as TUTTI_FUSED=0 gives it.
TEST(CudaCollectivesStaged, DeviceBitsEqualHostBits) {
  auto n = cuda::DeviceCount();
  if (!n.ok()) GTEST_SKIP() << "no usable CUDA device: " << n.status().message();
  setenv("TUTTI_FUSED", "0", 1);
  setenv("TUTTI_SLOT_MAX", "0", 1);
  CommOptions o;
  o.timeout_s = 120;
  testing::RunThreadRanks(3, [&](Communicator& c) {
    std::vector<float> in(3000), host_out(3000), dev_out(3000);
    for (size_t i = 0; i < in.size(); ++i) in[i] = 0.1f * static_cast<float>(i % 97) + c.rank();
    void *din = nullptr, *dout = nullptr;
    ASSERT_EQ(cudaMalloc(&din, in.size() * 4), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&dout, in.size() * 4), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(din, in.data(), in.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_TRUE(c.AllReduce(in.data(), host_out.data(), in.size(), DataType::kFloat32, RedOp::kSum).ok());
    Status st = c.AllReduce(din, dout, in.size(), DataType::kFloat32, RedOp::kSum);
    ASSERT_TRUE(st.ok()) << st.ToString();
    ASSERT_EQ(cudaMemcpy(dev_out.data(), dout, in.size() * 4, cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(std::memcmp(dev_out.data(), host_out.data(), in.size() * 4), 0);
    ASSERT_TRUE(c.Barrier().ok());
    cudaFree(din);
    cudaFree(dout);
    c.Destroy();
  }, o);
  unsetenv("TUTTI_FUSED");
  unsetenv("TUTTI_SLOT_MAX");
}

}  // namespace
}  // namespace tutti
