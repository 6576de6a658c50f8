#include "core/coll/buffer_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace tutti {
namespace {

TEST(BufferPool, ReusesAReturnedBuffer) {
  auto pool = std::make_shared<BufferPool>();
  char* first;
  {
    auto b = pool->Get(1 << 20);
    ASSERT_TRUE(b.ok());
    first = b->get();
  }
  EXPECT_EQ(pool->kept_bytes(), size_t{1} << 20);
  auto again = pool->Get(1000);  // the smallest free buffer that fits
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->get(), first);
  EXPECT_EQ(pool->kept_bytes(), 0u);
  EXPECT_EQ(pool->Get(0)->get(), nullptr);
}

TEST(BufferPool, IdleBuffersAreReleasedWithoutFurtherCalls) {
  auto pool = std::make_shared<BufferPool>(std::chrono::milliseconds(20));
  { auto b = pool->Get(4 << 20); }
  EXPECT_EQ(pool->kept_bytes(), size_t{4} << 20);
  pool->TrimIdle();  // not idle long enough yet (unless this thread was descheduled for 20 ms)
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  pool->TrimIdle();
  EXPECT_EQ(pool->kept_bytes(), 0u);
}

TEST(BufferPool, KeepsAtMostTheLimitOfBuffers) {
  auto pool = std::make_shared<BufferPool>();
  {
    std::vector<std::shared_ptr<char>> held;
    for (size_t i = 0; i < BufferPool::kMaxKeptBuffers + 4; ++i) held.push_back(*pool->Get(4096 * (i + 1)));
  }
  size_t biggest_kept = 0;
  for (size_t i = 0; i < BufferPool::kMaxKeptBuffers; ++i) biggest_kept += 4096 * (i + 5);
  EXPECT_EQ(pool->kept_bytes(), biggest_kept);  // the smallest four were dropped
}

// Device pools: a call's Get or Put never frees (a CUDA release waits for every kernel on the
// device); the progress thread's TrimIdle does, over the limits too.
TEST(BufferPool, FreesOnlyInTheBackgroundWhenAsked) {
  auto freed = std::make_shared<std::atomic<int>>(0);
  BufferAllocator a = BufferAllocator::Host();
  auto host_free = a.free;
  a.free = [freed, host_free](char* p) {
    ++*freed;
    host_free(p);
  };
  a.free_in_background = true;
  auto pool = std::make_shared<BufferPool>(std::chrono::milliseconds(0), a);
  {
    std::vector<std::shared_ptr<char>> held;
    for (size_t i = 0; i < BufferPool::kMaxKeptBuffers + 4; ++i) held.push_back(*pool->Get(4096 * (i + 1)));
  }
  { auto again = pool->Get(1 << 20); }
  EXPECT_EQ(freed->load(), 0);
  pool->TrimIdle();  // idle for more than 0 ms: all of them
  EXPECT_EQ(freed->load(), static_cast<int>(BufferPool::kMaxKeptBuffers) + 5);
  EXPECT_EQ(pool->kept_bytes(), 0u);
}

TEST(BufferPool, AnImpossibleSizeIsAnErrorValue) {
  auto pool = std::make_shared<BufferPool>();
  Result<std::shared_ptr<char>> b = pool->Get(size_t{1} << 62);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), Code::kSystemError);
  EXPECT_NE(b.status().message().find("out of memory"), std::string::npos) << b.status().ToString();
  EXPECT_NE(b.status().message().find(std::to_string(size_t{1} << 62)), std::string::npos) << b.status().ToString();
}

}  // namespace
}  // namespace tutti
