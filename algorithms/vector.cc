#include "algorithms/vector.h"

#include <algorithm>
#include <string>
#include <utility>

namespace tutti::algo {
namespace {

// The peers rank + 1, ..., rank + n - 1 in steps of up to `fanout` each, in both directions:
// in each step this rank sends to rank + k and receives from rank - k.
template <typename Fn>
void Pairs(Schedule& s, int n, int rank, int fanout, Fn&& add) {
  fanout = std::max(fanout, 1);
  for (int first = 1; first < n; first += fanout) {
    Step step;
    for (int k = first; k < std::min(n, first + fanout); ++k) add(step, (rank + k) % n, (rank - k + n) % n);
    s.streams[0].steps.push_back(std::move(step));
  }
}

Schedule OneStream() {
  Schedule s;
  s.streams.resize(1);
  return s;
}

void LocalCopy(Schedule& s, Region from, Region to) {
  if (from.count == 0) return;
  if (s.streams[0].steps.empty()) s.streams[0].steps.emplace_back();
  LocalOp op;
  op.kind = LocalOp::Kind::kCopy;
  op.dst = to;
  op.srcs = {from};
  s.streams[0].steps.back().locals.push_back(std::move(op));
}

}  // namespace

VBlocks VBlocks::Packed(const std::vector<uint64_t>& counts) {
  VBlocks b;
  b.counts = counts;
  uint64_t at = 0;
  for (uint64_t c : counts) {
    b.displs.push_back(at);
    at += c;
  }
  return b;
}

uint64_t VBlocks::Extent() const {
  uint64_t end = 0;
  for (size_t i = 0; i < counts.size() && i < displs.size(); ++i) end = std::max(end, displs[i] + counts[i]);
  return end;
}

Status ValidateBlocks(const VBlocks& b, int n, const char* what, bool written) {
  const std::string w = what;
  if (b.counts.size() != static_cast<size_t>(n) || b.displs.size() != static_cast<size_t>(n))
    return InvalidArgument(w + ": " + std::to_string(b.counts.size()) + " counts and " + std::to_string(b.displs.size()) +
                           " displacements for " + std::to_string(n) + " ranks");
  constexpr uint64_t kMax = uint64_t{1} << 62;
  for (int i = 0; i < n; ++i)
    if (b.counts[i] > kMax || b.displs[i] > kMax)
      return InvalidArgument(w + ": block " + std::to_string(i) + " (count " + std::to_string(b.counts[i]) +
                             " at " + std::to_string(b.displs[i]) + ") is out of range");
  if (!written) return OkStatus();
  std::vector<std::pair<uint64_t, int>> order;
  for (int i = 0; i < n; ++i)
    if (b.counts[i] > 0) order.emplace_back(b.displs[i], i);
  std::sort(order.begin(), order.end());
  for (size_t k = 1; k < order.size(); ++k) {
    const int prev = order[k - 1].second, cur = order[k].second;
    if (b.displs[prev] + b.counts[prev] > b.displs[cur])
      return InvalidArgument(w + ": the blocks of ranks " + std::to_string(prev) + " and " + std::to_string(cur) +
                             " overlap (" + std::to_string(b.counts[prev]) + " at " + std::to_string(b.displs[prev]) +
                             ", " + std::to_string(b.counts[cur]) + " at " + std::to_string(b.displs[cur]) + ")");
  }
  return OkStatus();
}

Schedule AllToAllV(int n, int rank, const VBlocks& send, const VBlocks& recv, int fanout) {
  Schedule s = OneStream();
  Pairs(s, n, rank, fanout, [&](Step& step, int to, int from) {
    step.sends.push_back({to, {Buf::kInput, send.displs[to], send.counts[to]}});
    step.recvs.push_back({from, {Buf::kOutput, recv.displs[from], recv.counts[from]}});
  });
  LocalCopy(s, {Buf::kInput, send.displs[rank], send.counts[rank]}, {Buf::kOutput, recv.displs[rank], recv.counts[rank]});
  return s;
}

Schedule AllGatherV(int n, int rank, uint64_t count, const VBlocks& recv, int fanout) {
  Schedule s = OneStream();
  Pairs(s, n, rank, fanout, [&](Step& step, int to, int from) {
    step.sends.push_back({to, {Buf::kInput, 0, count}});
    step.recvs.push_back({from, {Buf::kOutput, recv.displs[from], recv.counts[from]}});
  });
  LocalCopy(s, {Buf::kInput, 0, count}, {Buf::kOutput, recv.displs[rank], recv.counts[rank]});
  return s;
}

Schedule GatherV(int n, int rank, int root, uint64_t count, const VBlocks& recv, int fanout) {
  Schedule s = OneStream();
  if (rank != root) {
    Step step;
    step.sends.push_back({root, {Buf::kInput, 0, count}});
    s.streams[0].steps.push_back(std::move(step));
    return s;
  }
  Pairs(s, n, rank, fanout, [&](Step& step, int, int from) {
    step.recvs.push_back({from, {Buf::kOutput, recv.displs[from], recv.counts[from]}});
  });
  LocalCopy(s, {Buf::kInput, 0, count}, {Buf::kOutput, recv.displs[rank], recv.counts[rank]});
  return s;
}

Schedule ScatterV(int n, int rank, int root, const VBlocks& send, uint64_t count, int fanout) {
  Schedule s = OneStream();
  if (rank != root) {
    Step step;
    step.recvs.push_back({root, {Buf::kOutput, 0, count}});
    s.streams[0].steps.push_back(std::move(step));
    return s;
  }
  Pairs(s, n, rank, fanout, [&](Step& step, int to, int) {
    step.sends.push_back({to, {Buf::kInput, send.displs[to], send.counts[to]}});
  });
  LocalCopy(s, {Buf::kInput, send.displs[rank], send.counts[rank]}, {Buf::kOutput, 0, count});
  return s;
}

Schedule ReduceScatterV(int n, int rank, const std::vector<uint64_t>& counts, int fanout) {
  Schedule s = OneStream();
  const VBlocks in = VBlocks::Packed(counts);
  const uint64_t mine = counts[rank];
  // Rank j's contribution to our block lands in scratch slot j (skipping our own).
  auto slot = [&](int j) { return static_cast<uint64_t>(j < rank ? j : j - 1) * mine; };
  Pairs(s, n, rank, fanout, [&](Step& step, int to, int from) {
    step.sends.push_back({to, {Buf::kInput, in.displs[to], counts[to]}});
    step.recvs.push_back({from, {Buf::kScratch, slot(from), mine}});
  });
  s.scratch_count = static_cast<uint64_t>(n - 1) * mine;
  if (s.streams[0].steps.empty()) s.streams[0].steps.emplace_back();
  LocalOp op;
  op.dst = {Buf::kOutput, 0, mine};
  for (int j = 0; j < n; ++j)
    op.srcs.push_back(j == rank ? Region{Buf::kInput, in.displs[rank], mine} : Region{Buf::kScratch, slot(j), mine});
  if (n == 1) {
    op.kind = LocalOp::Kind::kCopy;
  } else {
    op.kind = LocalOp::Kind::kReduce;
  }
  if (mine > 0) s.streams[0].steps.back().locals.push_back(std::move(op));
  return s;
}

}  // namespace tutti::algo
