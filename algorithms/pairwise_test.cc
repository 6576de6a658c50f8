#include <gtest/gtest.h>

#include "algorithms/testing.h"

namespace tutti::algo {
namespace {

TEST(Pairwise, AllToAll) { EXPECT_GT(testing::Sweep("pairwise", Collective::kAllToAll), 0); }

}  // namespace
}  // namespace tutti::algo
