// Where every rank on the host has a CPU, an all_reduce or reduce_scatter of kReducedReadMin to
// kReducedReadMax bytes has its pieces read one-sidedly into scratch instead of streamed through
// the FIFO (core/coll/selector.h): results stay exact at and around both bounds, in place and
// out of place, and with one rank refusing reads (TUTTI_SHM_CMA=0: the others then ask it for
// the data).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdint>
#include <vector>

#include "core/coll/selector.h"
#include "core/communicator.h"
#include "tests/harness/thread_ranks.h"

namespace tutti::testing {
namespace {

// (Below 2^21: the sums of two never overflow.)
int32_t Value(int rank, uint64_t i) { return static_cast<int32_t>((i * 2654435761u) % 1000003) + rank * 7; }

void SumsAreExact(bool all_read) {
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "one CPU: two ranks outnumber it, nothing is read";
  const int n = 2;
  auto options_of = [&](int r) {
    CommOptions o;
    o.transport = "shm";
    o.timeout_s = 60;
    if (!all_read && r == n - 1) o.shm_cma = false;
    return o;
  };
  RunThreadRanks(n, [&](Communicator& c) {
    const int r = c.rank();
    const uint64_t lo = kReducedReadMin / 4, hi = kReducedReadMax / 4;  // int32 elements
    for (uint64_t count : {lo, lo + 3, hi, hi + 1}) {
      for (bool in_place : {false, true}) {
        std::vector<int32_t> in(count), out(count, -1);
        for (uint64_t i = 0; i < count; ++i) in[i] = Value(r, i);
        int32_t* recv = in_place ? in.data() : out.data();
        Status st = c.AllReduce(in.data(), recv, count, DataType::kInt32, RedOp::kSum);
        ASSERT_TRUE(st.ok()) << "rank " << r << ": " << st.ToString();
        uint64_t wrong = 0;
        for (uint64_t i = 0; i < count; ++i) wrong += recv[i] != Value(0, i) + Value(1, i);
        EXPECT_EQ(wrong, 0u) << "all_reduce, rank " << r << ", count " << count << ", in place " << in_place;
      }
      const uint64_t block = count / n;  // reduce_scatter: the call moves n blocks
      std::vector<int32_t> in(block * n), out(block, -1);
      for (uint64_t i = 0; i < in.size(); ++i) in[i] = Value(r, i);
      Status st = c.ReduceScatter(in.data(), out.data(), block, DataType::kInt32, RedOp::kSum);
      ASSERT_TRUE(st.ok()) << "rank " << r << ": " << st.ToString();
      uint64_t wrong = 0;
      for (uint64_t i = 0; i < block; ++i) {
        const uint64_t at = static_cast<uint64_t>(r) * block + i;
        wrong += out[i] != Value(0, at) + Value(1, at);
      }
      EXPECT_EQ(wrong, 0u) << "reduce_scatter, rank " << r << ", block " << block;
    }
    c.Destroy();
  }, options_of);
}

TEST(ReducedReads, SumsAreExactWherePiecesAreRead) { SumsAreExact(true); }
TEST(ReducedReads, SumsAreExactWhereOneRankRefusesReads) { SumsAreExact(false); }

}  // namespace
}  // namespace tutti::testing
