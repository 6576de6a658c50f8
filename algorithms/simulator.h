// Schedule simulator: runs the schedules of all ranks of one collective in one thread, checks
// them, and computes what every rank's output holds.
//
// Values are expressions, not numbers: element i of rank r's input is a leaf; every element a
// kReduce writes is a new node whose children are its sources, left to right. Two elements
// with the same ExprId come from one computation (copied around); ExprPool::Same() compares
// expressions structurally: same inputs, same order and bracketing, so for any deterministic
// op bitwise identical results.
// EvaluateOutputs() turns the expressions into values for any element type and op (int64 sum,
// double sum, a non-commutative signature, strings showing the order, ...).
//
// Execution: every stream posts its first step; a posted receive is matched with a posted send
// of the same stream between the same two ranks in FIFO order (as the executor's per-stream
// tags do); a step completes once all its transfers are matched, then runs its local ops and
// posts the next step. Data moves when a send is matched (CheckSchedule guarantees no one else
// may write the region meanwhile). Errors (Status):
//  - CheckSchedule failures (bounds, input writes, overlaps, races between streams);
//  - a matched send and receive of different counts (kMismatch);
//  - reading an output/scratch element nothing wrote (sends, copies and reductions alike);
//  - deadlock: no step can complete but some streams are unfinished (names the stuck ranks,
//    streams, steps and the unmatched transfers).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "algorithms/schedule.h"
#include "core/base/status.h"

namespace tutti::algo {

using ExprId = uint32_t;
constexpr ExprId kUnwritten = 0;

class ExprPool {
 public:
  // Leaves: rank r has inputs[r] input elements.
  explicit ExprPool(const std::vector<uint64_t>& inputs = {});

  uint64_t num_leaves() const { return leaf_base_.empty() ? 0 : leaf_base_.back(); }
  size_t num_nodes() const { return start_.size() - 1; }
  bool IsLeaf(ExprId id) const { return id != kUnwritten && id <= num_leaves(); }
  ExprId Leaf(int rank, uint64_t index) const { return static_cast<ExprId>(leaf_base_[rank] + index + 1); }
  void LeafOf(ExprId id, int* rank, uint64_t* index) const;
  // A new node reducing `children` left to right; kUnwritten if the pool is full (2^32 - 1 ids).
  ExprId Reduce(const ExprId* children, size_t k);
  // Whether x and y are the same expression (structurally).
  bool Same(ExprId x, ExprId y) const;
  const ExprId* Children(ExprId id, size_t* k) const;
  // "((0 1) 2)": leaves as their rank (rank:index with show_index), nodes parenthesized;
  // cut after max_len characters.
  std::string Format(ExprId id, bool show_index = false, size_t max_len = 400) const;

  // Value of every node (index id - num_leaves() - 1), children before parents.
  template <typename T, typename InputFn, typename Op>
  std::vector<T> EvaluateNodes(InputFn input, Op op) const {
    std::vector<T> vals;
    vals.reserve(num_nodes());
    auto value = [&](ExprId id) -> T {
      if (IsLeaf(id)) {
        int r;
        uint64_t i;
        LeafOf(id, &r, &i);
        return input(r, i);
      }
      return vals[id - num_leaves() - 1];
    };
    for (size_t j = 0; j < num_nodes(); ++j) {
      T acc = value(children_[start_[j]]);
      for (uint32_t c = start_[j] + 1; c < start_[j + 1]; ++c) acc = op(acc, value(children_[c]));
      vals.push_back(std::move(acc));
    }
    return vals;
  }

 private:
  std::vector<uint64_t> leaf_base_;  // prefix sums of inputs, size n + 1
  std::vector<uint32_t> start_{0};   // node j's children: children_[start_[j], start_[j+1])
  std::vector<ExprId> children_;
};

struct SimResult {
  ExprPool pool;
  std::vector<std::vector<ExprId>> output;  // per rank, BufferCount(output) elements
  // heard_from[r][q]: rank q's start happens before rank r's end (through messages).
  std::vector<std::vector<bool>> heard_from;
  uint64_t messages = 0;  // matched send/receive pairs
  uint64_t elements = 0;  // elements they carried
};

// Builds every rank's schedule with BuildSchedule(algorithm, args with rank = r) and simulates
// them (args.rank is ignored).
//
// Aliasing::kInPlace simulates the in-place call (schedule.h): each rank's input and output are
// one storage, initially holding the input. Reads of the output see whatever that storage holds;
// a read of an input element (send, copy or reduction source) is an error unless its storage
// still holds that very input element (so the call would read its original input), and
// CheckSchedule(..., kInPlace) runs too (races on the shared storage between streams, a receive
// over a send of the same step, partial overlaps of a local op's source and destination). A local
// op whose destination is exactly a source's storage reads it, then writes it, in one pass.
// SimResult::output is the output part of the storage at the end.
Result<SimResult> Simulate(const std::string& algorithm, const CollArgs& args, Aliasing aliasing = Aliasing::kDistinct);
// Simulates the given schedules (schedules[r] for rank r; args.rank ignored).
Result<SimResult> SimulateSchedules(const CollArgs& args, const std::vector<Schedule>& schedules,
                                    Aliasing aliasing = Aliasing::kDistinct);

// out[r][i] = value of rank r's output element i; `unwritten` where nothing wrote it.
template <typename T, typename InputFn, typename Op>
std::vector<std::vector<T>> EvaluateOutputs(const SimResult& res, InputFn input, Op op, T unwritten = T{}) {
  const std::vector<T> nodes = res.pool.template EvaluateNodes<T>(input, op);
  std::vector<std::vector<T>> out(res.output.size());
  for (size_t r = 0; r < res.output.size(); ++r) {
    out[r].reserve(res.output[r].size());
    for (ExprId id : res.output[r]) {
      if (id == kUnwritten) {
        out[r].push_back(unwritten);
      } else if (res.pool.IsLeaf(id)) {
        int q;
        uint64_t i;
        res.pool.LeafOf(id, &q, &i);
        out[r].push_back(input(q, i));
      } else {
        out[r].push_back(nodes[id - res.pool.num_leaves() - 1]);
      }
    }
  }
  return out;
}

// The int64 sum (wrapping) of input(rank, index) values: the usual check of data movement.
std::vector<std::vector<int64_t>> SumOutputs(const SimResult& res, const std::function<int64_t(int, uint64_t)>& input);

}  // namespace tutti::algo
