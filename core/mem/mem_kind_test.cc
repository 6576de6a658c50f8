#include "core/mem/mem_kind.h"

#include <gtest/gtest.h>

#include <vector>

namespace tutti {
namespace {

TEST(MemKind, NamesAndDescriptions) {
  EXPECT_STREQ(MemKindName(MemKind::kHost), "host");
  EXPECT_STREQ(MemKindName(MemKind::kCudaDevice), "cuda device");
  MemInfo d{MemKind::kCudaDevice, 1, 7};
  EXPECT_EQ(Describe(d), "cuda device 1");
  EXPECT_EQ(Describe(MemInfo{}), "host");
  EXPECT_FALSE(d.host_accessible());
  EXPECT_TRUE((MemInfo{MemKind::kCudaManaged, 0, 1}).host_accessible());
}

TEST(MemKind, HostOnlyProbeSaysHostForEverything) {
  auto probe = HostOnlyProbe();
  int x;
  EXPECT_FALSE(probe->knows_devices());
  EXPECT_EQ(probe->Probe(&x).kind, MemKind::kHost);
  EXPECT_EQ(probe->Probe(nullptr).kind, MemKind::kHost);
}

// Host memory is host memory whether or not a CUDA driver is present; without a working
// driver the system probe knows no devices.
TEST(MemKind, SystemProbeCallsHeapAndStackHost) {
  const MemoryProbe& probe = SystemMemoryProbe();
  std::vector<char> heap(1 << 20);
  int stack = 0;
  EXPECT_EQ(probe.Probe(heap.data()).kind, MemKind::kHost);
  EXPECT_EQ(probe.Probe(&stack).kind, MemKind::kHost);
  EXPECT_EQ(probe.Probe(heap.data()).device, -1);
  EXPECT_EQ(&probe, &SystemMemoryProbe());  // one per process
}

}  // namespace
}  // namespace tutti
