// A team of several host threads running one stream together, as a thread block's threads do on
// the GPU: each member takes its share of every loop (tid, tid + size, ...), decisions are agreed
// through votes, and the leader alone writes the stream's state, published by barriers. This is
// how the cooperative paths of the primitives (shares, votes, barriers, the leader's writes)
// run, under ThreadSanitizer too, on machines without a GPU. Host only.
#pragma once

#include <barrier>
#include <memory>

namespace tutti::prims {

class HostTeam {
 public:
  // What the members of one team share.
  struct Shared {
    explicit Shared(int n) : size(n), barrier(n), votes(new bool[static_cast<size_t>(n)]()) {}
    const int size;
    std::barrier<> barrier;
    std::unique_ptr<bool[]> votes;
  };

  HostTeam(Shared* shared, int tid) : s_(shared), tid_(tid) {}
  int tid() const { return tid_; }
  int size() const { return s_->size; }
  bool leader() const { return tid_ == 0; }
  void Sync() const { s_->barrier.arrive_and_wait(); }
  bool All(bool v) const { return Vote(v, true); }
  bool Any(bool v) const { return Vote(v, false); }
  void FenceBeforePublish() const { Sync(); }

 private:
  bool Vote(bool v, bool all) const {
    s_->votes[tid_] = v;
    Sync();
    bool r = all;
    for (int i = 0; i < s_->size; ++i) r = all ? (r && s_->votes[i]) : (r || s_->votes[i]);
    Sync();  // every member read the votes before anyone votes again
    return r;
  }

  Shared* s_;
  int tid_;
};

}  // namespace tutti::prims
