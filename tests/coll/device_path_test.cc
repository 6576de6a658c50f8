// The device path of collectives (staging through page-locked host memory, local work on the
// device's engine, device scratch pools) run on a machine without a GPU: a stand-in runtime
// says that memory is a device's, hands out "device" and "staging" memory from the host heap
// (poisoned, so a missing copy shows), and runs tasks on a worker that completes them late.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "core/exec/cpu_engine.h"
#include "core/exec/device_runtime.h"
#include "tests/coll/coll_check.h"
#include "tests/coll/thread_coll_check.h"
#include "tests/harness/thread_ranks.h"

namespace tutti::testing {
namespace {

class HostAsDevice : public exec::DeviceRuntime {
 public:
  // all_device: every buffer is device 0's; else only memory from AllocDevice.
  explicit HostAsDevice(bool all_device) : all_device_(all_device) {
    engine_ = std::make_shared<exec::CpuEngine>(exec::CpuEngine::Mode::kWorker, [this](const exec::LocalTask& t) {
      if (t.kind == exec::LocalTask::Kind::kCopy) ++copies;
      int us;
      {
        std::lock_guard<std::mutex> lock(mu_);
        us = static_cast<int>(rng_() % 100);
      }
      std::this_thread::sleep_for(std::chrono::microseconds(us));
    });
  }
  std::string name() const override { return "host-as-device"; }
  int DeviceOf(const void* p, size_t) const override {
    if (all_device_) return 0;
    std::lock_guard<std::mutex> lock(mu_);
    return device_.count(p) ? 0 : -1;
  }
  Result<std::shared_ptr<exec::LocalEngine>> Engine(int device) override {
    if (device != 0) return InvalidArgument("no device " + std::to_string(device));
    return std::shared_ptr<exec::LocalEngine>(engine_);
  }
  char* AllocStaging(size_t bytes) override {
    ++staging_allocs;
    ++live;
    return Poisoned(bytes);
  }
  void FreeStaging(char* p) override {
    --live;
    std::free(p);
  }
  char* AllocDevice(int, size_t bytes) override {
    ++device_allocs;
    ++live;
    char* p = Poisoned(bytes);
    std::lock_guard<std::mutex> lock(mu_);
    device_.insert(p);
    return p;
  }
  void FreeDevice(int, char* p) override {
    --live;
    {
      std::lock_guard<std::mutex> lock(mu_);
      device_.erase(p);
    }
    std::free(p);
  }

  std::atomic<int> staging_allocs{0}, device_allocs{0}, live{0}, copies{0};

 private:
  static char* Poisoned(size_t bytes) {
    char* p = static_cast<char*>(std::malloc(bytes));
    if (p != nullptr) std::memset(p, 0xA5, bytes);
    return p;
  }
  const bool all_device_;
  mutable std::mutex mu_;
  std::mt19937 rng_{11};
  std::set<const void*> device_;
  std::shared_ptr<exec::CpuEngine> engine_;
};

TEST(DevicePath, EveryCollectiveThroughStaging) {
  auto rt = std::make_shared<HostAsDevice>(/*all_device=*/true);
  CommOptions o;
  o.timeout_s = 120;
  o.device_runtime = rt;
  CollCheckConfig cfg;
  cfg.counts = {0, 1, 7, 300};
  ExpectCollectivesPassOnThreadRanks(3, o, cfg);
  EXPECT_GT(rt->staging_allocs.load(), 0);
  EXPECT_GT(rt->device_allocs.load(), 0);
  EXPECT_GT(rt->copies.load(), 1000) << "messages were not staged";
  EXPECT_EQ(rt->live.load(), 0) << "staging or device memory outlived the communicators";
}

TEST(DevicePath, MixedHostAndDeviceBuffersAreRefused) {
  auto rt = std::make_shared<HostAsDevice>(/*all_device=*/false);
  CommOptions o;
  o.timeout_s = 30;
  o.device_runtime = rt;
  RunThreadRanks(2, [&](Communicator& c) {
    char* dev = rt->AllocDevice(0, 64 * sizeof(float));
    std::vector<float> host(64, 1.0f);
    Status st = c.AllReduce(dev, host.data(), 64, DataType::kFloat32, RedOp::kSum);
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << st.ToString();
    EXPECT_NE(st.message().find("memory of device 0"), std::string::npos) << st.ToString();
    EXPECT_NE(st.message().find("host memory"), std::string::npos) << st.ToString();
    // Both on the device: fine, and the result is there.
    std::memcpy(dev, host.data(), 64 * sizeof(float));
    st = c.AllReduce(dev, dev, 64, DataType::kFloat32, RedOp::kSum);
    EXPECT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(reinterpret_cast<float*>(dev)[63], 2.0f);
    rt->FreeDevice(0, dev);
    c.Destroy();
  }, o);
}

}  // namespace
}  // namespace tutti::testing
