#include "tests/harness/thread_ranks.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "core/base/logging.h"
#include "core/store/in_memory_store.h"

namespace tutti::testing {

void RunThreadRanks(int n, const std::function<void(Communicator&)>& body, const CommOptions& opts) {
  RunThreadRanks(n, body, [&](int) { return opts; });
}

void RunThreadRanks(int n, const std::function<void(Communicator&)>& body,
                    const std::function<CommOptions(int rank)>& options_of) {
  auto store = std::make_shared<InMemoryStore>();
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      SetLogRank(r);
      auto comm = Communicator::Create(store, r, n, options_of(r));
      ASSERT_TRUE(comm.ok()) << "rank " << r << ": " << comm.status().ToString();
      body(**comm);
    });
  }
  for (auto& t : threads) t.join();
}

namespace {
inline uint8_t PatternByte(uint64_t seed, uint64_t i) {
  uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull ^ (seed * 0xBF58476D1CE4E5B9ull);
  return static_cast<uint8_t>(x >> 56);
}
}  // namespace

void FillPattern(void* buf, size_t n, uint64_t seed) {
  auto* p = static_cast<uint8_t*>(buf);
  for (size_t i = 0; i < n; ++i) p[i] = PatternByte(seed, i);
}

int64_t FirstMismatch(const void* buf, size_t n, uint64_t seed) {
  auto* p = static_cast<const uint8_t*>(buf);
  for (size_t i = 0; i < n; ++i)
    if (p[i] != PatternByte(seed, i)) return static_cast<int64_t>(i);
  return -1;
}

}  // namespace tutti::testing
