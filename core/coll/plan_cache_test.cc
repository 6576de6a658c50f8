#include "core/coll/plan_cache.h"

#include <gtest/gtest.h>

namespace tutti {
namespace {

CollPlanKey Key(uint64_t count, std::string algo = "") {
  return {algo::Collective::kAllReduce, count, DataType::kFloat32, RedOp::kSum, 0, 2, std::move(algo)};
}

TEST(PlanCache, FindsWhatWasInsertedAndOnlyThat) {
  PlanCache cache;
  auto plan = std::make_shared<CollPlan>();
  plan->desc = "ring, count 8";
  cache.Insert(Key(8), plan);
  EXPECT_EQ(cache.Find(Key(8)).get(), plan.get());
  EXPECT_EQ(cache.Find(Key(9)), nullptr);
  EXPECT_EQ(cache.Find(Key(8, "tree")), nullptr);
  CollPlanKey other = Key(8);
  other.type = DataType::kInt32;
  EXPECT_EQ(cache.Find(other), nullptr);
  other = Key(8);
  other.root = 1;
  EXPECT_EQ(cache.Find(other), nullptr);
  other = Key(8);
  other.nchannels = 4;
  EXPECT_EQ(cache.Find(other), nullptr);
  EXPECT_EQ(cache.size(), 1u);
}

TEST(PlanCache, StartsOverWhenFull) {
  PlanCache cache;
  for (uint64_t i = 0; i < PlanCache::kMaxPlans; ++i) cache.Insert(Key(i), std::make_shared<CollPlan>());
  EXPECT_EQ(cache.size(), PlanCache::kMaxPlans);
  cache.Insert(Key(1u << 20), std::make_shared<CollPlan>());
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_NE(cache.Find(Key(1u << 20)), nullptr);
}

TEST(PlanCache, HashSeparatesFields) {
  CollPlanKeyHash h;
  EXPECT_NE(h(Key(8)), h(Key(9)));
  EXPECT_NE(h(Key(8)), h(Key(8, "ring")));
}

}  // namespace
}  // namespace tutti
