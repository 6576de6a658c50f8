#include "core/p2p/tag_queues.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <vector>

namespace tutti {
namespace {

using Q = TagQueues<int>;
std::shared_ptr<int> I(int v) { return std::make_shared<int>(v); }

TEST(TagQueues, EachTagIsFirstInFirstOut) {
  Q q;
  for (int i = 0; i < 6; ++i) q.Push(i % 2, I(i));
  EXPECT_EQ(q.tags(), 2u);
  EXPECT_EQ(q.items(), 6u);
  EXPECT_EQ(**q.Front(1), 1);
  for (int want : {1, 3, 5}) EXPECT_EQ(*q.PopFront(1), want);
  EXPECT_EQ(q.PopFront(1), nullptr);
  EXPECT_EQ(q.Front(1), nullptr);
  EXPECT_EQ(q.Find(1), nullptr);
  EXPECT_EQ(q.tags(), 1u);  // the emptied tag left
  for (int want : {0, 2, 4}) EXPECT_EQ(*q.PopFront(0), want);
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.items(), 0u);
}

TEST(TagQueues, EmptiedQueuesAreReusedForNewTagsWithoutMixingItems) {
  Q q;
  // Many tags used once each (as collectives do): nothing accumulates, spares or not.
  for (int tag = 0; tag < 1000; ++tag) {
    q.Push(-tag, I(tag));
    q.Push(-tag, I(tag + 1));
    ASSERT_EQ(q.tags(), 1u);
    ASSERT_EQ(*q.PopFront(-tag), tag);
    ASSERT_EQ(*q.PopFront(-tag), tag + 1);
    ASSERT_TRUE(q.empty());
  }
  // Several open at once, emptied in another order than opened, then reused under new tags.
  for (int round = 0; round < 3; ++round) {
    for (int tag = 0; tag < 10; ++tag) q.Push(100 * round + tag, I(tag));
    EXPECT_EQ(q.tags(), 10u);
    for (int tag = 9; tag >= 0; --tag) {
      const Q::Queue* queue = q.Find(100 * round + tag);
      ASSERT_NE(queue, nullptr);
      ASSERT_EQ(queue->size(), 1u);
      EXPECT_EQ(*q.PopFront(100 * round + tag), tag);
    }
    EXPECT_TRUE(q.empty());
  }
}

TEST(TagQueues, RemoveTakesOneItemFromTheMiddle) {
  Q q;
  std::vector<std::shared_ptr<int>> v;
  for (int i = 0; i < 4; ++i) {
    v.push_back(I(i));
    q.Push(7, v.back());
  }
  EXPECT_FALSE(q.Remove(7, I(2)));  // an equal value is not the same item
  EXPECT_FALSE(q.Remove(8, v[2]));
  EXPECT_TRUE(q.Remove(7, v[2]));
  EXPECT_FALSE(q.Remove(7, v[2]));
  std::vector<int> left;
  q.ForEach([&](int tag, const std::shared_ptr<int>& x) {
    EXPECT_EQ(tag, 7);
    left.push_back(*x);
  });
  EXPECT_EQ(left, (std::vector<int>{0, 1, 3}));
  for (int i : {0, 1, 3}) EXPECT_TRUE(q.Remove(7, v[i]));
  EXPECT_TRUE(q.empty());
}

// A queue keeps its first item in place and the rest behind it: order holds however pushes,
// pops and removals (of the first item too) interleave.
TEST(TagQueues, OrderHoldsAcrossTheFirstItemAndTheRest) {
  TagQueue<int> q;
  std::vector<std::shared_ptr<int>> v;
  for (int i = 0; i < 8; ++i) v.push_back(I(i));
  std::vector<int> model;  // what q should hold, in order
  auto check = [&] {
    std::vector<int> got;
    q.ForEach([&](const std::shared_ptr<int>& x) { got.push_back(*x); });
    ASSERT_EQ(got, model);
    ASSERT_EQ(q.size(), model.size());
    ASSERT_EQ(q.empty(), model.empty());
    if (!model.empty()) ASSERT_EQ(*q.front(), model.front());
  };
  auto push = [&](int i) {
    q.push_back(v[i]);
    model.push_back(i);
    check();
  };
  auto pop = [&] {
    ASSERT_EQ(*q.pop_front(), model.front());
    model.erase(model.begin());
    check();
  };
  auto erase = [&](int i) {
    ASSERT_TRUE(q.erase(v[i]));
    model.erase(std::find(model.begin(), model.end(), i));
    check();
  };
  push(0);
  pop();
  EXPECT_EQ(q.pop_front(), nullptr);
  push(1), push(2), push(3);
  erase(1);  // the first: the next moves up
  erase(3);  // the last
  push(4), push(5);
  pop();
  pop();
  push(6);
  erase(5);
  erase(6);
  EXPECT_FALSE(q.erase(v[6]));
  push(7);
  pop();
}

TEST(TagQueues, TakeMovesEverythingAndClearReleasesIt) {
  Q q;
  auto kept = I(5);
  std::weak_ptr<int> watch = kept;
  q.Push(1, std::move(kept));
  q.Push(2, I(6));
  Q taken = q.Take();
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(taken.items(), 2u);
  q.Push(1, I(9));  // the original is usable afterwards
  EXPECT_EQ(*q.PopFront(1), 9);
  taken.Clear();
  EXPECT_TRUE(taken.empty());
  EXPECT_TRUE(watch.expired());  // items are released, not parked in spares
}

}  // namespace
}  // namespace tutti
