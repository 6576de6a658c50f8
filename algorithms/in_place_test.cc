// registry.h's InPlaceSafe() table against the in-place simulation: every pair marked safe
// passes the whole in-place sweep (testing.h's InPlaceSweep), and every pair marked unsafe
// fails somewhere in it, so the table neither lies nor is needlessly conservative (and the
// check demonstrably can fail). One test per (algorithm, collective), spread over shards.
#include <gtest/gtest.h>

#include <cstdio>
#include <ostream>

#include "algorithms/registry.h"
#include "algorithms/testing.h"

namespace tutti::algo {
namespace {

struct Pair {
  std::string algorithm;
  Collective coll;
};

void PrintTo(const Pair& p, std::ostream* os) { *os << p.algorithm << " " << CollectiveName(p.coll); }

std::vector<Pair> AllPairs() {
  std::vector<Pair> v;
  for (const std::string& a : AlgorithmNames())
    for (Collective c : CollectivesOf(a)) v.push_back({a, c});
  return v;
}

class InPlace : public ::testing::TestWithParam<Pair> {};

TEST_P(InPlace, TableMatchesSimulation) {
  const Pair& p = GetParam();
  int cases = 0;
  if (InPlaceSafe(p.algorithm, p.coll)) {
    const std::vector<std::string> failures = testing::InPlaceSweep(p.algorithm, p.coll, 10, &cases);
    for (const std::string& f : failures) ADD_FAILURE() << "marked in-place safe, but: " << f;
    EXPECT_GT(cases, 1000);
  } else {
    const std::vector<std::string> failures = testing::InPlaceSweep(p.algorithm, p.coll, 1, &cases);
    EXPECT_FALSE(failures.empty()) << p.algorithm << " " << CollectiveName(p.coll) << " is marked unsafe in place, "
                                   << "but passes all " << cases << " cases of the in-place sweep: mark it safe";
    if (!failures.empty()) std::printf("unsafe as expected: %s\n", failures[0].c_str());
  }
}

INSTANTIATE_TEST_SUITE_P(All, InPlace, ::testing::ValuesIn(AllPairs()), [](const auto& info) {
  return info.param.algorithm + "_" + CollectiveName(info.param.coll);
});

TEST(InPlaceTable, UnknownPairsAreUnsafe) {
  EXPECT_FALSE(InPlaceSafe("no_such_algorithm", Collective::kAllReduce));
  EXPECT_FALSE(InPlaceSafe("bruck", Collective::kAllReduce));  // bruck does not implement it
  EXPECT_TRUE(InPlaceSafe("rhd", Collective::kAllReduce));
  EXPECT_FALSE(InPlaceSafe("ring", Collective::kAllReduce));
}

// The distinct-buffer simulation of an unsafe pair is fine: only aliasing breaks it.
TEST(InPlaceTable, UnsafeOnlyInPlace) {
  CollArgs a;
  a.coll = Collective::kAllReduce;
  a.nranks = 5;
  a.count = 17;
  EXPECT_EQ(testing::CheckOne("ring", a), "");
  EXPECT_NE(testing::CheckOne("ring", a, Aliasing::kInPlace).find("overwritten"), std::string::npos);
}

}  // namespace
}  // namespace tutti::algo
