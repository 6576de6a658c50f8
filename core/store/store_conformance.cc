#include "core/store/store_conformance.h"

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace tutti {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

TEST_P(StoreConformanceTest, SetThenGet) {
  ASSERT_TRUE(store()->Set("k", "v1").ok());
  Result<std::string> v = store()->Get("k", 1);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(*v, "v1");
  ASSERT_TRUE(store()->Set("k", "v2").ok());
  EXPECT_EQ(*store()->Get("k", 1), "v2");
  EXPECT_EQ(*handle(1)->Get("k", 1), "v2");  // another handle sees it
}

TEST_P(StoreConformanceTest, BinaryKeysAndValuesRoundTrip) {
  std::string key("a\0b", 3);
  std::string value;
  for (int i = 0; i < 256; ++i) value.push_back(static_cast<char>(i));
  ASSERT_TRUE(store()->Set(key, value).ok());
  EXPECT_EQ(*store()->Get(key, 1), value);
  EXPECT_FALSE(*store()->Check({"a"}));
  ASSERT_TRUE(store()->Set("empty", "").ok());
  EXPECT_EQ(*store()->Get("empty", 1), "");
  std::string big(3 << 20, 'x');
  big[12345] = 'y';
  ASSERT_TRUE(store()->Set("big", big).ok());
  EXPECT_EQ(*handle(1)->Get("big", 5), big);
}

TEST_P(StoreConformanceTest, GetTimesOutQuicklyNamingTheKey) {
  auto t0 = Clock::now();
  Result<std::string> v = store()->Get("never-set", 0.2);
  double took = SecondsSince(t0);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), Code::kTimeout) << v.status().ToString();
  EXPECT_NE(v.status().message().find("never-set"), std::string::npos) << v.status().ToString();
  EXPECT_GE(took, 0.15);
  EXPECT_LT(took, 10.0);
  // A zero timeout answers at once either way.
  EXPECT_EQ(store()->Get("never-set", 0).status().code(), Code::kTimeout);
  ASSERT_TRUE(store()->Set("now", "x").ok());
  EXPECT_EQ(*store()->Get("now", 0), "x");
}

TEST_P(StoreConformanceTest, GetWaitsForASetFromAnotherThread) {
  auto t0 = Clock::now();
  std::thread setter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    EXPECT_TRUE(handle(1)->Set("late", "here").ok());
  });
  Result<std::string> v = store()->Get("late", 5);
  double took = SecondsSince(t0);
  setter.join();
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(*v, "here");
  EXPECT_GE(took, 0.1);
  EXPECT_LT(took, 10.0);
}

TEST_P(StoreConformanceTest, AddCountsAndRejectsNonIntegers) {
  EXPECT_EQ(*store()->Add("n", 5), 5);
  EXPECT_EQ(*handle(1)->Add("n", -7), -2);
  EXPECT_EQ(*store()->Add("n", 0), -2);
  EXPECT_EQ(*store()->Get("n", 1), "-2");
  ASSERT_TRUE(store()->Set("s", "12").ok());
  EXPECT_EQ(*store()->Add("s", 1), 13);
  ASSERT_TRUE(store()->Set("t", "abc").ok());
  Result<int64_t> bad = store()->Add("t", 1);
  EXPECT_EQ(bad.status().code(), Code::kInvalidArgument) << bad.status().ToString();
  EXPECT_EQ(*store()->Get("t", 1), "abc");  // unchanged
  ASSERT_TRUE(store()->Set("max", "9223372036854775807").ok());
  EXPECT_EQ(store()->Add("max", 1).status().code(), Code::kInvalidArgument);
}

TEST_P(StoreConformanceTest, AddWakesAGet) {
  std::thread adder([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_TRUE(handle(1)->Add("counter", 3).ok());
  });
  Result<std::string> v = store()->Get("counter", 5);
  adder.join();
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(*v, "3");
}

TEST_P(StoreConformanceTest, WaitForAllKeys) {
  ASSERT_TRUE(store()->Wait({}, 0).ok());
  ASSERT_TRUE(store()->Set("a", "1").ok());
  auto t0 = Clock::now();
  Status st = store()->Wait({"a", "b"}, 0.2);
  EXPECT_EQ(st.code(), Code::kTimeout) << st.ToString();
  EXPECT_NE(st.message().find("b\""), std::string::npos) << st.ToString();  // b, maybe prefixed
  EXPECT_EQ(st.message().find("a\""), std::string::npos) << st.ToString();  // a is there
  EXPECT_LT(SecondsSince(t0), 10.0);
  std::thread setter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_TRUE(handle(1)->Set("c", "3").ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_TRUE(handle(1)->Set("b", "2").ok());
  });
  st = store()->Wait({"a", "b", "c", "a"}, 5);
  setter.join();
  EXPECT_TRUE(st.ok()) << st.ToString();
}

TEST_P(StoreConformanceTest, CheckAndDelete) {
  EXPECT_TRUE(*store()->Check({}));
  EXPECT_FALSE(*store()->Check({"x"}));
  ASSERT_TRUE(store()->Set("x", "1").ok());
  EXPECT_TRUE(*store()->Check({"x"}));
  EXPECT_FALSE(*store()->Check({"x", "y"}));
  ASSERT_TRUE(handle(1)->Delete("x").ok());
  EXPECT_FALSE(*store()->Check({"x"}));
  EXPECT_EQ(store()->Get("x", 0.05).status().code(), Code::kTimeout);
  EXPECT_TRUE(store()->Delete("x").ok());  // deleting a missing key is fine
  EXPECT_EQ(*store()->Add("x", 2), 2);     // and Add starts again from 0
}

TEST_P(StoreConformanceTest, RejectsArgumentsOverTheLimits) {
  std::string long_key(kStoreMaxKeyBytes + 1, 'k');
  EXPECT_EQ(store()->Set(long_key, "v").code(), Code::kInvalidArgument);
  EXPECT_EQ(store()->Get(long_key, 0).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(store()->Add(long_key, 1).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(store()->Delete(long_key).code(), Code::kInvalidArgument);
  std::vector<std::string> many(kStoreMaxWaitKeys + 1, "k");
  EXPECT_EQ(store()->Wait(many, 0).code(), Code::kInvalidArgument);
  EXPECT_EQ(store()->Check(many).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(store()->Get("k", -1).status().code(), Code::kInvalidArgument);
  std::string huge(kStoreMaxValueBytes + 1, 'v');
  EXPECT_EQ(store()->Set("k", huge).code(), Code::kInvalidArgument);
  // The store still works.
  ASSERT_TRUE(store()->Set("k", "v").ok());
  EXPECT_EQ(*store()->Get("k", 1), "v");
}

TEST_P(StoreConformanceTest, ConcurrentAddsAreExactAndDistinctKeysDoNotMix) {
  constexpr int kThreads = 16;
  constexpr int kAdds = 50;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Store* s = handle(t);
      std::string key = "own/" + std::to_string(t);
      for (int i = 0; i < kAdds; ++i) {
        if (!s->Add("shared", 1).ok()) ++failures;
        if (!s->Set(key, std::to_string(i)).ok()) ++failures;
        Result<std::string> v = s->Get(key, 1);
        if (!v.ok() || *v != std::to_string(i)) ++failures;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(*store()->Get("shared", 1), std::to_string(kThreads * kAdds));
}

}  // namespace
}  // namespace tutti
