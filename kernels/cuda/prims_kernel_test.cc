// The fused kernel on the GPU against the schedule simulator (and so the host world and the host
// path), bit for bit: every algorithm and collective through the lowering, both protocols, every
// type and op, LL flags wrapping, and the error paths. Skips without a usable device.
#include "kernels/cuda/prims_kernel.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "algorithms/lowering.h"
#include "algorithms/registry.h"
#include "kernels/cuda/device.h"
#include "kernels/prims/host_world.h"
#include "kernels/prims/test_programs.h"
#include "kernels/prims/world_check.h"

namespace tutti::cuda {
namespace {

using algo::Collective;
using prims::FifoGeom;
using prims::Proto;
using prims::testing::OneStream;
using prims::testing::RecvOp;
using prims::testing::SendOp;

// Device copies of host buffers, freed on scope exit.
class DeviceCopies {
 public:
  ~DeviceCopies() {
    for (void* p : ptrs_) cudaFree(p);
  }
  void* Copy(const void* host, size_t bytes) {
    void* p = nullptr;
    if (cudaMalloc(&p, bytes == 0 ? 64 : bytes) != cudaSuccess) return nullptr;
    ptrs_.push_back(p);
    if (bytes > 0 && cudaMemcpy(p, host, bytes, cudaMemcpyHostToDevice) != cudaSuccess) return nullptr;
    return p;
  }

 private:
  std::vector<void*> ptrs_;
};

int g_threads = 256;

// RunWorldCheck's runner on the device: buffers copied in, the kernel, outputs copied back.
Status RunOnDevice(DataType type, RedOp op, const std::vector<algo::PrimProgram>& programs,
                   const std::vector<prims::HostRankBuffers>& host, const prims::HostWorldOptions& o) {
  DeviceCopies copies;
  std::vector<DeviceRankBuffers> dev(host.size());
  for (size_t r = 0; r < host.size(); ++r) {
    dev[r].input = copies.Copy(host[r].input, host[r].input_bytes);
    dev[r].output = copies.Copy(host[r].output, host[r].output_bytes);
    dev[r].scratch = copies.Copy(host[r].scratch, host[r].scratch_bytes);
    if (!dev[r].input || !dev[r].output || !dev[r].scratch) return InternalError("device buffers");
    dev[r].input_bytes = host[r].input_bytes;
    dev[r].output_bytes = host[r].output_bytes;
    dev[r].scratch_bytes = host[r].scratch_bytes;
  }
  DeviceWorldOptions d;
  d.geom = o.geom;
  d.counter_base = o.counter_base;
  d.timeout_s = o.timeout_s;
  d.threads = g_threads;
  if (Status st = RunDeviceWorld(type, op, programs, dev, d); !st.ok()) return st;
  for (size_t r = 0; r < host.size(); ++r) {
    if (host[r].output_bytes > 0 &&
        cudaMemcpy(host[r].output, dev[r].output, host[r].output_bytes, cudaMemcpyDeviceToHost) != cudaSuccess) {
      return InternalError("copy of the output");
    }
  }
  return OkStatus();
}

prims::WorldCheck DeviceCheck(const std::string& algorithm, Collective coll, int n, uint64_t count, FifoGeom geom) {
  prims::WorldCheck c;
  c.algorithm = algorithm;
  c.args.coll = coll;
  c.args.nranks = n;
  c.args.count = count;
  c.world.geom = geom;
  c.world.timeout_s = 20;
  c.run = RunOnDevice;
  return c;
}

TEST(CudaPrimsArgs, RejectedBeforeTouchingTheDevice) {
  const std::vector<algo::PrimProgram> progs(2);
  const std::vector<DeviceRankBuffers> bufs(2);
  DeviceWorldOptions o;
  o.geom = FifoGeom{2, 60, Proto::kSimple};
  EXPECT_EQ(RunDeviceWorld(DataType::kFloat32, RedOp::kSum, progs, bufs, o).code(), Code::kInvalidArgument);
  o.geom = FifoGeom{2, 64, Proto::kSimple};
  o.threads = 33;
  EXPECT_EQ(RunDeviceWorld(DataType::kFloat32, RedOp::kSum, progs, bufs, o).code(), Code::kInvalidArgument);
  o.threads = kMaxBlockThreads + 32;  // more than the kernel is compiled for
  EXPECT_EQ(RunDeviceWorld(DataType::kFloat32, RedOp::kSum, progs, bufs, o).code(), Code::kInvalidArgument);
  o.threads = 256;
  EXPECT_EQ(RunDeviceWorld(DataType::kFloat32, RedOp::kSum, progs, {}, o).code(), Code::kInvalidArgument);
  // A program reaching past a buffer of known size.
  DeviceRankBuffers sized;
  sized.input_bytes = sized.output_bytes = 16;
  const Status st = RunDeviceWorld(DataType::kFloat32, RedOp::kSum, {OneStream({SendOp(1, 5)}), OneStream({RecvOp(0, 5)})},
                                   {sized, sized}, o);
  EXPECT_EQ(st.code(), Code::kInvalidArgument) << st.ToString();
  EXPECT_NE(st.message().find("touches input[0, 5) of a buffer of 4 elements"), std::string::npos) << st.ToString();
}

class CudaPrims : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<int> n = DeviceCount();
    if (!n.ok()) GTEST_SKIP() << n.status().ToString();
    g_threads = 256;
  }
};

TEST_F(CudaPrims, EveryAlgorithmMatchesTheScheduleBitForBit) {
  for (const std::string& a : algo::AlgorithmNames()) {
    for (Collective coll : algo::CollectivesOf(a)) {
      for (int n : {1, 2, 3, 4, 8}) {
        for (uint64_t count : {0, 1, 1000, 65537}) {
          if (coll == Collective::kBarrier && count != 0) continue;
          for (Proto proto : {Proto::kSimple, Proto::kLL}) {
            for (FifoGeom g : {FifoGeom{4, 4096, proto}, FifoGeom{2, 64, proto}}) {
              if (g.slot_bytes == 64 && count > 1000) continue;
              for (int nchannels : {1, 2}) {
                prims::WorldCheck c = DeviceCheck(a, coll, n, count, g);
                c.args.nchannels = nchannels;
                c.args.root = n - 1;
                const Status st = prims::RunWorldCheck(c);
                ASSERT_TRUE(st.ok()) << st.ToString() << " slots " << g.nslots << "x" << g.slot_bytes
                                     << (proto == Proto::kLL ? " LL" : " Simple");
              }
            }
          }
        }
      }
    }
  }
}

TEST_F(CudaPrims, UnfusedProgramsToo) {
  for (const char* a : {"ring", "tree", "rhd"}) {
    prims::WorldCheck c = DeviceCheck(a, Collective::kAllReduce, 4, 5000, FifoGeom{4, 1024, Proto::kSimple});
    c.lower = algo::LowerOptions{false, false};
    const Status st = prims::RunWorldCheck(c);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
}

// The kernels combine as the host does: every type and op, both protocols.
TEST_F(CudaPrims, EveryTypeAndOp) {
  const DataType types[] = {DataType::kInt8,    DataType::kUint8,    DataType::kInt32,   DataType::kUint32,
                            DataType::kInt64,   DataType::kUint64,   DataType::kFloat16, DataType::kBfloat16,
                            DataType::kFloat32, DataType::kFloat64,  DataType::kFp8E4M3, DataType::kFp8E5M2};
  for (DataType t : types) {
    for (RedOp op : {RedOp::kSum, RedOp::kProd, RedOp::kMin, RedOp::kMax, RedOp::kBand, RedOp::kBor, RedOp::kBxor}) {
      if (!OpTakesType(op, t)) continue;
      for (Proto proto : {Proto::kSimple, Proto::kLL}) {
        for (const char* a : {"ring", "tree"}) {
          prims::WorldCheck c = DeviceCheck(a, Collective::kAllReduce, 4, 4099, FifoGeom{4, 1024, proto});
          c.type = t;
          c.op = op;
          const Status st = prims::RunWorldCheck(c);
          ASSERT_TRUE(st.ok()) << st.ToString() << " " << DataTypeName(t) << " " << RedOpName(op);
        }
      }
    }
  }
}

TEST_F(CudaPrims, BlockSizesAndWrappingFlags) {
  for (int threads : {32, 128, kMaxBlockThreads}) {
    g_threads = threads;
    for (Proto proto : {Proto::kSimple, Proto::kLL}) {
      prims::WorldCheck c = DeviceCheck("ring", Collective::kAllReduce, 4, 3001, FifoGeom{2, 64, proto});
      c.args.nchannels = 2;
      c.world.counter_base = 0xffffffffull - 10;
      const Status st = prims::RunWorldCheck(c);
      ASSERT_TRUE(st.ok()) << st.ToString() << " threads " << threads;
    }
  }
}

// One world launched three times: the counters carry on from run to run (LL flags wrapping on
// the way), and each run writes the whole output again.
TEST_F(CudaPrims, RepeatedLaunchesOfOneWorld) {
  for (Proto proto : {Proto::kSimple, Proto::kLL}) {
    prims::WorldCheck c = DeviceCheck("ring", Collective::kAllReduce, 4, 2000, FifoGeom{2, 256, proto});
    c.args.nchannels = 2;
    c.world.counter_base = 0xffffffffull - 40;
    c.run = [](DataType type, RedOp op, const std::vector<algo::PrimProgram>& programs,
               const std::vector<prims::HostRankBuffers>& host, const prims::HostWorldOptions& o) -> Status {
      DeviceCopies copies;
      std::vector<DeviceRankBuffers> dev(host.size());
      for (size_t r = 0; r < host.size(); ++r) {
        dev[r] = DeviceRankBuffers{copies.Copy(host[r].input, host[r].input_bytes),
                                   copies.Copy(host[r].output, host[r].output_bytes),
                                   copies.Copy(host[r].scratch, host[r].scratch_bytes)};
      }
      DeviceWorldOptions d;
      d.geom = o.geom;
      d.counter_base = o.counter_base;
      Result<std::unique_ptr<DeviceWorld>> world = DeviceWorld::Create(type, op, programs, dev, d);
      if (!world.ok()) return world.status();
      EXPECT_GT((*world)->TrafficBytes(), 0u);
      for (int run = 0; run < 3; ++run) {
        for (size_t r = 0; r < host.size(); ++r) cudaMemset(dev[r].output, 0xa5, host[r].output_bytes);
        if (Status st = (*world)->Launch(nullptr); !st.ok()) return st;
        if (Status st = (*world)->Wait(); !st.ok()) return st.WithContext("run " + std::to_string(run));
      }
      for (size_t r = 0; r < host.size(); ++r) {
        cudaMemcpy(host[r].output, dev[r].output, host[r].output_bytes, cudaMemcpyDeviceToHost);
      }
      return OkStatus();
    };
    const Status st = prims::RunWorldCheck(c);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
}

TEST_F(CudaPrims, MismatchAndTimeoutAreReportedNotHung) {
  void* mem = nullptr;
  ASSERT_EQ(cudaMalloc(&mem, 4096), cudaSuccess);
  auto* b = static_cast<uint8_t*>(mem);
  const std::vector<DeviceRankBuffers> bufs = {{b, b + 1024, nullptr}, {b + 2048, b + 3072, nullptr}};
  DeviceWorldOptions o;
  o.geom = FifoGeom{2, 64, Proto::kSimple};
  Status st = RunDeviceWorld(DataType::kFloat32, RedOp::kSum,
                             {OneStream({SendOp(1, 5)}), OneStream({RecvOp(0, 4)})}, bufs, o);
  EXPECT_EQ(st.code(), Code::kMismatch) << st.ToString();
  EXPECT_NE(st.message().find("a piece from rank 0 carries 20 bytes"), std::string::npos) << st.ToString();

  // LL: the size word gives it away too.
  o.geom = FifoGeom{2, 64, Proto::kLL};
  st = RunDeviceWorld(DataType::kFloat32, RedOp::kSum, {OneStream({SendOp(1, 5)}), OneStream({RecvOp(0, 4)})}, bufs, o);
  EXPECT_EQ(st.code(), Code::kMismatch) << st.ToString();
  // A piece nobody receives.
  st = RunDeviceWorld(DataType::kFloat32, RedOp::kSum,
                      {OneStream({SendOp(1, 4), SendOp(1, 4)}), OneStream({RecvOp(0, 4)})}, bufs, o);
  EXPECT_EQ(st.code(), Code::kMismatch) << st.ToString();
  EXPECT_NE(st.message().find("rank 0 sent pieces to rank 1 on stream 0"), std::string::npos) << st.ToString();

  o.geom = FifoGeom{2, 64, Proto::kSimple};
  o.timeout_s = 0.5;
  const auto t0 = std::chrono::steady_clock::now();
  st = RunDeviceWorld(DataType::kFloat32, RedOp::kSum,
                      {OneStream({RecvOp(1, 4), SendOp(1, 4)}), OneStream({RecvOp(0, 4), SendOp(0, 4)})},
                      bufs, o);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(st.code(), Code::kTimeout) << st.ToString();
  EXPECT_NE(st.message().find("waiting to receive from rank"), std::string::npos) << st.ToString();
  EXPECT_LT(secs, 5.0);
  cudaFree(mem);
}

TEST_F(CudaPrims, AFailedWorldRefusesFurtherLaunches) {
  void* mem = nullptr;
  ASSERT_EQ(cudaMalloc(&mem, 4096), cudaSuccess);
  auto* b = static_cast<uint8_t*>(mem);
  DeviceWorldOptions o;
  o.geom = FifoGeom{2, 64, Proto::kSimple};
  o.timeout_s = 0.3;
  Result<std::unique_ptr<DeviceWorld>> world = DeviceWorld::Create(
      DataType::kFloat32, RedOp::kSum,
      {OneStream({RecvOp(1, 4), SendOp(1, 4)}), OneStream({RecvOp(0, 4), SendOp(0, 4)})},
      {{b, b + 1024, nullptr}, {b + 2048, b + 3072, nullptr}}, o);
  ASSERT_TRUE(world.ok()) << world.status().ToString();
  ASSERT_TRUE((*world)->Launch(nullptr).ok());
  EXPECT_EQ((*world)->Wait().code(), Code::kTimeout);
  const Status again = (*world)->Launch(nullptr);
  EXPECT_EQ(again.code(), Code::kInvalidUsage) << again.ToString();
  EXPECT_NE(again.message().find("create a new world"), std::string::npos) << again.ToString();
  world->reset();
  cudaFree(mem);
}

// Not a benchmark (bench/ has those): a figure for the log, and a large case checked bitwise.
TEST_F(CudaPrims, LargeRingAllReduce) {
  for (Proto proto : {Proto::kSimple, Proto::kLL}) {
    prims::WorldCheck c = DeviceCheck("ring", Collective::kAllReduce, 8, 1 << 20, FifoGeom{8, 65536, proto});
    c.args.nchannels = 4;
    const auto t0 = std::chrono::steady_clock::now();
    const Status st = prims::RunWorldCheck(c);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ASSERT_TRUE(st.ok()) << st.ToString();
    std::printf("ring all_reduce 8 ranks x 4 MiB fp32 (%s), with copies and the check: %.3f s\n",
                proto == Proto::kLL ? "LL" : "Simple", secs);
  }
}

}  // namespace
}  // namespace tutti::cuda
