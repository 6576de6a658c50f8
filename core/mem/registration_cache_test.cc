#include "core/mem/registration_cache.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace tutti {
namespace {

// Answers "device 0" for one range and lets a test change the allocation id behind it, as
// cudaFree + cudaMalloc at the same address would.
class FakeProbe : public MemoryProbe {
 public:
  uintptr_t dev_base = 0;
  size_t dev_bytes = 0;
  uint64_t buffer_id = 1;
  mutable int calls = 0;
  MemInfo Probe(const void* p) const override {
    ++calls;
    uintptr_t a = reinterpret_cast<uintptr_t>(p);
    if (a >= dev_base && a < dev_base + dev_bytes) return {MemKind::kCudaDevice, 0, buffer_id};
    return {};
  }
  bool knows_devices() const override { return true; }
};

TEST(RegistrationCache, RegisterOnceReuseForSubranges) {
  FakeProbe probe;
  RegistrationCache cache(&probe);
  std::vector<char> buf(1 << 20);
  auto whole = cache.Register(buf.data(), buf.size());
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  EXPECT_EQ(probe.calls, 1);
  auto part = cache.Register(buf.data() + 4096, 8192);  // covered: the same registration
  ASSERT_TRUE(part.ok());
  EXPECT_EQ(part->get(), whole->get());
  EXPECT_EQ(probe.calls, 1);  // no second probe
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.holders((*whole)->id), 2u);
  EXPECT_EQ(cache.Lookup(buf.data() + 100, 1000).get(), whole->get());
  EXPECT_EQ(cache.Lookup(buf.data() + buf.size() - 1, 1).get(), whole->get());
  EXPECT_EQ(cache.Lookup(buf.data() + buf.size() - 1, 2), nullptr);  // runs past the end
  EXPECT_EQ(cache.Lookup(buf.data() - 1, 1), nullptr);
  ASSERT_TRUE(cache.Deregister(*part).ok());
  EXPECT_EQ(cache.size(), 1u);  // still held once
  ASSERT_TRUE(cache.Deregister(*whole).ok());
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(cache.Lookup(buf.data(), 1), nullptr);
  Status twice = cache.Deregister(*whole);
  EXPECT_EQ(twice.code(), Code::kInvalidArgument);
  EXPECT_NE(twice.message().find("deregistered twice"), std::string::npos) << twice.ToString();
}

TEST(RegistrationCache, OverlappingAndSameBaseRangesCoexist) {
  FakeProbe probe;
  RegistrationCache cache(&probe);
  std::vector<char> buf(64 << 10);
  auto small = *cache.Register(buf.data(), 4096);
  auto big = *cache.Register(buf.data(), buf.size());  // same base, larger: a second registration
  EXPECT_NE(small.get(), big.get());
  EXPECT_EQ(cache.size(), 2u);
  auto mid = *cache.Register(buf.data() + 1000, 40000);  // covered by big
  EXPECT_EQ(mid.get(), big.get());
  EXPECT_NE(cache.Lookup(buf.data() + 8192, 100), nullptr);
  ASSERT_TRUE(cache.Deregister(big).ok());
  ASSERT_TRUE(cache.Deregister(mid).ok());
  EXPECT_EQ(cache.Lookup(buf.data() + 8192, 100), nullptr);  // only the small one is left
  EXPECT_EQ(cache.Lookup(buf.data() + 10, 100).get(), small.get());
  cache.Clear();
  EXPECT_EQ(cache.size(), 0u);
}

TEST(RegistrationCache, KnowsTheMemoryKindAndDropsStaleDeviceRegistrations) {
  FakeProbe probe;
  std::vector<char> fake_device(1 << 16);
  probe.dev_base = reinterpret_cast<uintptr_t>(fake_device.data());
  probe.dev_bytes = fake_device.size();
  RegistrationCache cache(&probe);
  auto reg = *cache.Register(fake_device.data(), fake_device.size());
  EXPECT_EQ(reg->mem.kind, MemKind::kCudaDevice);
  EXPECT_EQ(reg->mem.device, 0);
  EXPECT_EQ(cache.Lookup(fake_device.data(), 10, /*revalidate=*/true).get(), reg.get());
  probe.buffer_id = 2;  // freed and allocated again at the same address
  EXPECT_EQ(cache.Lookup(fake_device.data(), 10), reg);  // without revalidation: still there
  EXPECT_EQ(cache.Lookup(fake_device.data(), 10, /*revalidate=*/true), nullptr);
  EXPECT_EQ(cache.size(), 0u);
}

TEST(RegistrationCache, BadArguments) {
  std::unique_ptr<MemoryProbe> probe = HostOnlyProbe();  // outlives the cache
  RegistrationCache cache(probe.get());
  int x;
  EXPECT_EQ(cache.Register(nullptr, 4).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(cache.Register(&x, 0).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(cache.Register(reinterpret_cast<void*>(UINTPTR_MAX - 10), 100).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(cache.Deregister(nullptr).code(), Code::kInvalidArgument);
}

TEST(RegistrationCache, ThreadsRegisterAndLookUpConcurrently) {
  FakeProbe probe;
  RegistrationCache cache(&probe);
  std::vector<char> buf(1 << 20);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        char* p = buf.data() + (t * 4096 + i % 64) % (buf.size() - 4096);
        auto r = cache.Register(p, 4096);
        ASSERT_TRUE(r.ok());
        EXPECT_NE(cache.Lookup(p + 1, 100), nullptr);
        ASSERT_TRUE(cache.Deregister(*r).ok());
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(cache.size(), 0u);
}

}  // namespace
}  // namespace tutti
