#include "algorithms/stats.h"

#include <gtest/gtest.h>

#include "algorithms/registry.h"

namespace tutti::algo {
namespace {

CollArgs Args(Collective c, int n, uint64_t count) {
  CollArgs a;
  a.coll = c;
  a.nranks = n;
  a.count = count;
  return a;
}

// The counts match the textbook costs (anchors.md).
TEST(Stats, RingAllReduce) {
  auto st = AlgorithmStats("ring", Args(Collective::kAllReduce, 8, 800), 4);
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->steps, 14);                      // 2 (n - 1)
  EXPECT_EQ(st->bytes_sent, 2u * 7 * 100 * 4);    // 2 (n-1)/n of 3200 bytes
  EXPECT_EQ(st->bytes_reduced, 7u * 100 * 4);     // (n-1)/n
  EXPECT_EQ(st->scratch_bytes, 2u * 100 * 4);    // two block slots (in-place safety)
  EXPECT_EQ(st->bytes_copied, 0u);
}

TEST(Stats, RhdAllReduce) {
  auto st = AlgorithmStats("rhd", Args(Collective::kAllReduce, 8, 800), 4);
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->steps, 6);                       // 2 log2 n
  EXPECT_EQ(st->bytes_sent, 2u * 700 * 4);        // 2 (n-1)/n
  auto odd = AlgorithmStats("rhd", Args(Collective::kAllReduce, 12, 800), 4);
  ASSERT_TRUE(odd.ok());
  EXPECT_EQ(odd->steps, 8);                      // + fold and unfold
}

TEST(Stats, BinomialBroadcast) {
  CollArgs a = Args(Collective::kBroadcast, 13, 100);
  a.root = 5;
  auto st = AlgorithmStats("binomial", a, 8);
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->steps, 4);  // ceil(log2 13), at the root
  EXPECT_EQ(st->bytes_sent, 4u * 800);
}

TEST(Stats, PipelinedStreams) {
  CollArgs a = Args(Collective::kBroadcast, 4, 1000);
  a.chunk = 100;
  a.nchannels = 2;
  auto st = AlgorithmStats("ring", a, 1);
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->streams, 10);
  EXPECT_EQ(st->steps, 2);
  EXPECT_EQ(st->bytes_sent, 1000u);
}

TEST(Stats, Errors) {
  EXPECT_FALSE(AlgorithmStats("nope", Args(Collective::kAllReduce, 4, 1), 4).ok());
}

}  // namespace
}  // namespace tutti::algo
