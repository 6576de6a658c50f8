// Binomial-tree broadcast and reduce (tree described in binomial.h).
//
// Broadcast: a non-root receives the data from its parent into its output, then sends it to
// its children, largest subtree first, one child per step (so the tree doubles the number of
// ranks holding the data every step: ceil(log2 n) steps from the root's point of view).
// Reduce: a rank receives its children's partials one per step, smallest subtree first (the
// order in which they finish), accumulating into scratch (the root: its output), then sends
// the partial to its parent. `chunk` (default kDefaultChunk) pipelines both: each piece is a
// stream.
//
// REDUCTION ORDER (reduce): at relative rank v, acc = ((x_v op S(v+1)) op S(v+2)) op S(v+4) ...
// where S(c) is child c's subtree result, so every element is folded in ascending relative
// rank (root, root+1, ..., root+n-1 mod n), bracketed by the binomial tree.
#include "algorithms/binomial.h"

#include "algorithms/common.h"

namespace tutti::algo {
namespace binomial {

int LowBit(int v, int n) {
  if (v != 0) return v & -v;
  int m = 1;
  while (m < n) m <<= 1;
  return m;
}

int SubtreeEnd(int v, int n) {
  const int64_t end = static_cast<int64_t>(v) + LowBit(v, n);
  return end < n ? static_cast<int>(end) : n;
}

std::vector<int> ChildOffsets(int v, int n) {
  std::vector<int> ms;
  const int lb = LowBit(v, n);
  for (int m = 1; m < lb && v + m < n; m <<= 1) ms.push_back(m);
  return ms;
}

}  // namespace binomial

using binomial::ChildOffsets;
using binomial::LowBit;

Schedule BinomialBroadcast(const CollArgs& a) {
  if (a.nranks == 1) return SingleRank(a);
  const int n = a.nranks, v = Mod(a.rank - a.root, n);
  auto abs = [&](int rel) { return Mod(rel + a.root, n); };
  const std::vector<int> ms = ChildOffsets(v, n);
  Schedule s;
  for (const Span& p : Pieces(a.count, a.nchannels, a.chunk == 0 ? kDefaultChunk : a.chunk)) {
    Stream& st = s.streams.emplace_back();
    const Region out = Rg(Buf::kOutput, p);
    const Region src = v == 0 ? Rg(Buf::kInput, p) : out;
    if (v != 0) AddRecv(st.steps.emplace_back(), abs(v - LowBit(v, n)), out);
    for (size_t i = ms.size(); i-- > 0;) AddSend(st.steps.emplace_back(), abs(v + ms[i]), src);
    if (v == 0) AddCopy(st.steps.front(), out, src);
  }
  return Finish(std::move(s));
}

Schedule BinomialReduce(const CollArgs& a) {
  if (a.nranks == 1) return SingleRank(a);
  const int n = a.nranks, v = Mod(a.rank - a.root, n);
  auto abs = [&](int rel) { return Mod(rel + a.root, n); };
  const std::vector<int> ms = ChildOffsets(v, n);
  Schedule s;
  for (const Span& p : Pieces(a.count, a.nchannels, a.chunk == 0 ? kDefaultChunk : a.chunk)) {
    Stream& st = s.streams.emplace_back();
    const Region in = Rg(Buf::kInput, p);
    const Region acc = v == 0 ? Rg(Buf::kOutput, p) : Rg(Buf::kScratch, 2 * p.off, p.len);
    const Region tmp = Rg(Buf::kScratch, 2 * p.off + p.len, p.len);
    for (size_t i = 0; i < ms.size(); ++i) {
      Step& step = st.steps.emplace_back();
      AddRecv(step, abs(v + ms[i]), tmp);
      AddReduce(step, acc, {i == 0 ? in : acc, tmp});
    }
    if (v != 0) AddSend(st.steps.emplace_back(), abs(v - LowBit(v, n)), ms.empty() ? in : acc);
  }
  return Finish(std::move(s));
}

}  // namespace tutti::algo
