// Queues of items (posted receives, messages that arrived before their receive) by tag, each in
// arrival order. Tags come and go with every call (collectives use a fresh tag per call, a ping-
// pong one tag whose queue empties after every message), so a queue that empties leaves the
// map at once (nothing accumulates) but its node is kept for the next new tag, up to a few: the
// steady state of a run posts and matches without allocating queues.
#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tutti {

template <typename T>
class TagQueues {
 public:
  using Item = std::shared_ptr<T>;
  using Queue = std::deque<Item>;
  // Emptied queues kept for reuse. An empty queue still holds its first block of slots, so
  // reusing one allocates nothing; a few cover the tags a run has open at once.
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
    Item front = std::move(it->second.front());
    it->second.pop_front();
    if (it->second.empty()) Retire(it);
    return front;
  }

  // Removes `item` from the queue of `tag`; false if it is not there.
  bool Remove(int tag, const Item& item) {
    auto it = map_.find(tag);
    if (it == map_.end()) return false;
    Queue& q = it->second;
    for (auto i = q.begin(); i != q.end(); ++i)
      if (*i == item) {
        q.erase(i);
        if (q.empty()) Retire(it);
        return true;
      }
    return false;
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
    for (const auto& [tag, q] : map_)
      for (const Item& item : q) f(tag, item);
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
