// InMemoryStore and PrefixStore: the common Store semantics plus what is special to each.
#include <gtest/gtest.h>

#include <chrono>
#include <limits>
#include <memory>
#include <thread>

#include "core/store/in_memory_store.h"
#include "core/store/prefix_store.h"
#include "core/store/store_conformance.h"

namespace tutti {
namespace {

class InMemoryEnv : public StoreTestEnv {
 public:
  Store* handle(int) override { return &store_; }

 private:
  InMemoryStore store_;
};

// Every handle is its own PrefixStore over one shared base.
class PrefixEnv : public StoreTestEnv {
 public:
  Store* handle(int i) override {
    std::unique_ptr<PrefixStore>& h = handles_[i];
    if (!h) h = std::make_unique<PrefixStore>("job", base_);
    return h.get();
  }

 private:
  std::shared_ptr<InMemoryStore> base_ = std::make_shared<InMemoryStore>();
  std::unique_ptr<PrefixStore> handles_[32];
};

INSTANTIATE_TEST_SUITE_P(
    Local, StoreConformanceTest,
    ::testing::Values(StoreFactory{"InMemory", [] { return std::unique_ptr<StoreTestEnv>(new InMemoryEnv); }},
                      StoreFactory{"Prefix", [] { return std::unique_ptr<StoreTestEnv>(new PrefixEnv); }}),
    StoreFactoryName);

TEST(PrefixStore, PrependsThePrefixToEveryKey) {
  InMemoryStore base;
  PrefixStore p("comm7", &base);
  ASSERT_TRUE(p.Set("rank0", "addr").ok());
  EXPECT_EQ(*base.Get("comm7/rank0", 0), "addr");
  EXPECT_FALSE(*base.Check({"rank0"}));
  EXPECT_EQ(*p.Add("n", 2), 2);
  EXPECT_EQ(*base.Get("comm7/n", 0), "2");
  ASSERT_TRUE(base.Set("comm7/x", "1").ok());
  EXPECT_TRUE(*p.Check({"x", "rank0"}));
  ASSERT_TRUE(p.Wait({"x", "n"}, 0).ok());
  ASSERT_TRUE(p.Delete("x").ok());
  EXPECT_FALSE(*base.Check({"comm7/x"}));
}

TEST(PrefixStore, NamespacesDoNotCollideAndNest) {
  auto base = std::make_shared<InMemoryStore>();
  PrefixStore a("a", base);
  PrefixStore b("b", base);
  ASSERT_TRUE(a.Set("k", "from a").ok());
  ASSERT_TRUE(b.Set("k", "from b").ok());
  EXPECT_EQ(*a.Get("k", 0), "from a");
  EXPECT_EQ(*b.Get("k", 0), "from b");
  PrefixStore nested("inner", &a);
  ASSERT_TRUE(nested.Set("k", "deep").ok());
  EXPECT_EQ(*base->Get("a/inner/k", 0), "deep");
  Result<std::string> missing = b.Get("absent", 0.01);
  EXPECT_EQ(missing.status().code(), Code::kTimeout);
  EXPECT_NE(missing.status().message().find("b/absent"), std::string::npos);
}

TEST(PrefixStore, KeepsASharedBaseAlive) {
  auto base = std::make_shared<InMemoryStore>();
  std::weak_ptr<InMemoryStore> weak = base;
  auto p = std::make_unique<PrefixStore>("p", std::move(base));
  EXPECT_FALSE(weak.expired());
  ASSERT_TRUE(p->Set("k", "v").ok());
  p.reset();
  EXPECT_TRUE(weak.expired());
}

TEST(InMemoryStore, InfiniteTimeoutWaitsForTheKey) {
  InMemoryStore s;
  std::thread setter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_TRUE(s.Set("k", "v").ok());
  });
  Result<std::string> v = s.Get("k", std::numeric_limits<double>::infinity());
  setter.join();
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, "v");
}

}  // namespace
}  // namespace tutti
