// registry.h's InPlaceSafe() table against the in-place simulation: every pair marked safe
// passes the whole in-place sweep (testing.h's InPlaceSweep), and every pair marked unsafe
// fails somewhere in it, so the table neither lies nor is needlessly conservative. One test per
// (algorithm, collective), spread over shards. With every pair safe, the InPlaceCheck tests below
// show on deliberately unsafe schedules that the check demonstrably can fail.
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
  EXPECT_TRUE(InPlaceSafe("ring", Collective::kAllReduce));
}

// Every registered pair is marked safe now, so the "unsafe entries must fail" half of the table
// test has nothing to run. These deliberately unsafe schedules (the earlier ring all_reduce and
// pairwise all_to_all designs) keep showing that the in-place check fails where it must, while
// the same schedules pass with distinct buffers.

Region R(Buf b, uint64_t off, uint64_t len) { return Region{b, off, len}; }
int Md(int a, int n) { return ((a % n) + n) % n; }

// Ring all_reduce with one element per block (count == n) receiving the partials straight into
// the output, i.e. over the input block the reduction still has to read.
std::vector<Schedule> NaiveRingAllReduce(int n) {
  std::vector<Schedule> s(n);
  for (int r = 0; r < n; ++r) {
    Stream st;
    auto blk = [&](int j) { return static_cast<uint64_t>(Md(j, n)); };
    for (int k = 0; k < n - 1; ++k) {
      Step step;
      step.sends.push_back(Transfer{Md(r + 1, n), R(k == 0 ? Buf::kInput : Buf::kOutput, blk(r - k), 1)});
      const Region in = R(Buf::kOutput, blk(r - k - 1), 1);
      step.recvs.push_back(Transfer{Md(r - 1, n), in});
      step.locals.push_back(LocalOp{LocalOp::Kind::kReduce, in, {in, R(Buf::kInput, blk(r - k - 1), 1)}});
      st.steps.push_back(step);
    }
    for (int k = 0; k < n - 1; ++k) {
      Step step;
      step.sends.push_back(Transfer{Md(r + 1, n), R(Buf::kOutput, blk(r + 1 - k), 1)});
      step.recvs.push_back(Transfer{Md(r - 1, n), R(Buf::kOutput, blk(r - k), 1)});
      st.steps.push_back(step);
    }
    s[r].streams.push_back(st);
  }
  return s;
}

// Pairwise all_to_all receiving every block straight into the output: block r-t arrives at step
// t, before its storage's input went out at step n-t when 2t < n (and in the same step, 2t == n).
std::vector<Schedule> NaivePairwise(int n, uint64_t count) {
  std::vector<Schedule> s(n);
  for (int r = 0; r < n; ++r) {
    Stream st;
    auto blk = [&](Buf b, int j) { return R(b, static_cast<uint64_t>(Md(j, n)) * count, count); };
    for (int t = 1; t < n; ++t) {
      Step step;
      step.sends.push_back(Transfer{Md(r + t, n), blk(Buf::kInput, r + t)});
      step.recvs.push_back(Transfer{Md(r - t, n), blk(Buf::kOutput, r - t)});
      if (t == 1) step.locals.push_back(LocalOp{LocalOp::Kind::kCopy, blk(Buf::kOutput, r), {blk(Buf::kInput, r)}});
      st.steps.push_back(step);
    }
    s[r].streams.push_back(st);
  }
  return s;
}

CollArgs Args(Collective c, int n, uint64_t count) {
  CollArgs a;
  a.coll = c;
  a.nranks = n;
  a.count = count;
  return a;
}

TEST(InPlaceCheck, NaiveRingAllReduceFailsOnlyInPlace) {
  for (int n = 2; n <= 9; ++n) {
    const CollArgs a = Args(Collective::kAllReduce, n, static_cast<uint64_t>(n));
    const std::vector<Schedule> s = NaiveRingAllReduce(n);
    EXPECT_EQ(testing::CheckSchedules(a, s), "") << "n=" << n;
    const std::string err = testing::CheckSchedules(a, s, Aliasing::kInPlace);
    EXPECT_NE(err.find("overwritten"), std::string::npos) << "n=" << n << ": " << err;
  }
}

TEST(InPlaceCheck, NaivePairwiseFailsOnlyInPlace) {
  for (int n = 2; n <= 9; ++n) {
    const CollArgs a = Args(Collective::kAllToAll, n, 3);
    const std::vector<Schedule> s = NaivePairwise(n, 3);
    EXPECT_EQ(testing::CheckSchedules(a, s), "") << "n=" << n;
    const std::string err = testing::CheckSchedules(a, s, Aliasing::kInPlace);
    // Even n: step n/2 receives over what it sends (static check); odd n: a read after overwrite.
    EXPECT_NE(err.find(n % 2 == 0 ? "overlaps send" : "overwritten"), std::string::npos) << "n=" << n << ": " << err;
  }
}

// The fixed schedules pass the same cases in place.
TEST(InPlaceCheck, RegisteredSchedulesPassThoseCases) {
  for (int n = 2; n <= 9; ++n) {
    EXPECT_EQ(testing::CheckOne("ring", Args(Collective::kAllReduce, n, static_cast<uint64_t>(n)), Aliasing::kInPlace),
              "");
    EXPECT_EQ(testing::CheckOne("pairwise", Args(Collective::kAllToAll, n, 3), Aliasing::kInPlace), "");
  }
}

}  // namespace
}  // namespace tutti::algo
