// The device path of collectives (staging through page-locked host memory, local work on the
// device's engine, device scratch pools) run on a machine without a GPU, through a stand-in
// runtime (host_as_device.h).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "tests/coll/host_as_device.h"
#include "tests/coll/coll_check.h"
#include "tests/coll/thread_coll_check.h"
#include "tests/harness/thread_ranks.h"

namespace tutti::testing {
namespace {

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
