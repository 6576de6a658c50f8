#include "core/coll/call_digest.h"

#include <gtest/gtest.h>

#include <set>

namespace tutti {
namespace {

TEST(CallSignature, NeverZeroAndTellsCallsApart) {
  EXPECT_NE(CallSignature(""), 0u);
  EXPECT_NE(CallSignature("all_reduce(ring, count 8)"), CallSignature("all_reduce(ring, count 9)"));
  EXPECT_EQ(CallSignature("broadcast root 1"), CallSignature("broadcast root 1"));
}

TEST(ChainDigest, EveryFieldAndItsPositionCount) {
  const uint32_t t = ChainDigest(0, 1, 2, 3);
  EXPECT_EQ(t, ChainDigest(0, 1, 2, 3));
  EXPECT_NE(t, ChainDigest(0, 1, 2, 4));
  EXPECT_NE(t, ChainDigest(0, 2, 1, 3));
  EXPECT_NE(t, ChainDigest(1, 1, 2, 3));
}

// Two ranks whose calls agree produce the same message signatures; once one call differed,
// every later call's signature differs too, even where the later calls are the same.
TEST(CallTrail, ADifferenceCarriesIntoEveryLaterCall) {
  CallTrail a, b;
  for (uint32_t call : {11u, 12u, 11u}) {
    const uint32_t sa = a.Next(call), sb = b.Next(call);
    EXPECT_EQ(sa, sb);
    EXPECT_NE(sa, 0u);
  }
  EXPECT_NE(a.Next(CallSignature("broadcast root 0")), b.Next(CallSignature("broadcast root 1")));
  for (int i = 0; i < 100; ++i) EXPECT_NE(a.Next(7), b.Next(7)) << "call " << i << " after the difference";
}

TEST(CallTrail, RepeatedCallsGetDistinctSignatures) {
  CallTrail t;
  std::set<uint32_t> seen;
  for (int i = 0; i < 1000; ++i) seen.insert(t.Next(42));
  EXPECT_GT(seen.size(), 990u);  // a 32-bit digest: a rare repeat is allowed, a cycle is not
}

}  // namespace
}  // namespace tutti
