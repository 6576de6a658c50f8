// Queues of items (posted receives, messages that arrived before their receive) by tag, each in
// arrival order. Tags come and go with every call (collectives use a fresh tag per call, a ping-
// pong one tag whose queue empties after every message), so a queue that empties leaves the
// map at once (nothing accumulates) but its node is kept for the next new tag, up to a few: the
// steady state of a run posts and matches without allocating queues. A queue holds its first
// item in place and only the rest in a deque made when a second item comes: a tag usually has
// one item per peer, and ranks that run ahead of a root leave thousands of tags open at once
// (a deque per tag, made at once, took two more allocations and half a KiB each).
#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tutti {

// One tag's items, first in first out; the first in place.
template <typename T>
class TagQueue {
 public:
  using Item = std::shared_ptr<T>;
  bool empty() const { return !head_; }
  size_t size() const { return head_ ? 1 + (more_ ? more_->size() : 0) : 0; }
  const Item& front() const { return head_; }
  void push_back(Item item) {
    if (!head_) {
      head_ = std::move(item);
      return;
    }
    if (!more_) more_ = std::make_unique<std::deque<Item>>();
    more_->push_back(std::move(item));
  }
  Item pop_front() {
    Item out = std::move(head_);
    head_ = nullptr;
    if (more_ && !more_->empty()) {
      head_ = std::move(more_->front());
      more_->pop_front();
    }
    return out;
  }
  // Removes `item` (the same object); false if it is not here.
  bool erase(const Item& item) {
    if (!head_) return false;
    if (head_ == item) {
      pop_front();
      return true;
    }
    if (!more_) return false;
    for (auto i = more_->begin(); i != more_->end(); ++i)
      if (*i == item) {
        more_->erase(i);
        return true;
      }
    return false;
  }
  // f(item) for every item, in order.
  template <typename F>
  void ForEach(F&& f) const {
    if (!head_) return;
    f(head_);
    if (more_)
      for (const Item& item : *more_) f(item);
  }

 private:
  Item head_;
  std::unique_ptr<std::deque<Item>> more_;  // the items after the first, once there were two
};

template <typename T>
class TagQueues {
 public:
  using Item = std::shared_ptr<T>;
  using Queue = TagQueue<T>;
  // Emptied queues (map nodes) kept for reuse; a few cover the tags a run has open at once.
  static constexpr size_t kSpares = 4;

  void Push(int tag, Item item) {
    auto it = map_.find(tag);
    if (it == map_.end()) {
      if (spares_.empty()) {
        it = map_.emplace(tag, Queue()).first;
      } else {
        auto node = std::move(spares_.back());
        spares_.pop_back();
        node.key() = tag;
        it = map_.insert(std::move(node)).position;
      }
    }
    it->second.push_back(std::move(item));
  }

  // The first item queued under `tag`, or null.
  const Item* Front(int tag) const {
    auto it = map_.find(tag);
    return it == map_.end() ? nullptr : &it->second.front();
  }
  // The queue of `tag` (never empty), or null; for reading only.
  const Queue* Find(int tag) const {
    auto it = map_.find(tag);
    return it == map_.end() ? nullptr : &it->second;
  }

  // Removes and returns the first item queued under `tag` (null if none).
  Item PopFront(int tag) {
    auto it = map_.find(tag);
    if (it == map_.end()) return nullptr;
    Item front = it->second.pop_front();
    if (it->second.empty()) Retire(it);
    return front;
  }

  // Removes `item` from the queue of `tag`; false if it is not there.
  bool Remove(int tag, const Item& item) {
    auto it = map_.find(tag);
    if (it == map_.end()) return false;
    Queue& q = it->second;
    if (!q.erase(item)) return false;
    if (q.empty()) Retire(it);
    return true;
  }

  bool empty() const { return map_.empty(); }
  size_t tags() const { return map_.size(); }  // tags with something queued
  size_t items() const {
    size_t n = 0;
    for (const auto& [tag, q] : map_) n += q.size();
    return n;
  }
  // f(tag, item) for every item, tag by tag, each tag's in order.
  template <typename F>
  void ForEach(F&& f) const {
    for (const auto& entry : map_) {
      const int tag = entry.first;  // (a lambda may not capture a structured binding in C++17)
      entry.second.ForEach([&](const Item& item) { f(tag, item); });
    }
  }
  // Removes every item (and the spares: a cleared set is usually done with).
  void Clear() {
    map_.clear();
    spares_.clear();
  }
  // Moves every item out into a new set, leaving this one empty.
  TagQueues Take() {
    TagQueues out;
    out.map_.swap(map_);
    return out;
  }

 private:
  using Map = std::unordered_map<int, Queue>;
  void Retire(typename Map::iterator it) {
    if (spares_.size() < kSpares) {
      spares_.push_back(map_.extract(it));
    } else {
      map_.erase(it);
    }
  }
  Map map_;
  std::vector<typename Map::node_type> spares_;
};

}  // namespace tutti
