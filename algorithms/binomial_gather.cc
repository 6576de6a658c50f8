// Binomial-tree gather and scatter (tree described in binomial.h). No reductions.
//
// A rank's subtree is a contiguous range of relative ranks, so it moves as one message: in
// gather a rank collects its subtree's blocks in relative order in scratch (slot k = relative
// rank v + k) and sends them to its parent in one piece; in scatter the reverse. The root reads
// or writes its absolute-order buffer directly where a child's range is contiguous there (one
// channel, no wrap past rank n-1); otherwise it goes through scratch slots and local copies.
// Gather receives all children in one step; scatter sends to one child per step, largest
// subtree first. ceil(log2 n) steps on the root.
#include "algorithms/binomial.h"
#include "algorithms/common.h"

namespace tutti::algo {
namespace {

struct Ctx {
  int n, root, v;
  uint64_t count;
  Span p;
  int Abs(int rel) const { return Mod(rel + root, n); }
  // Slot k of this stream's scratch (relative rank v + k, or root + k on the root).
  Region Slots(int k, int num) const {
    return Rg(Buf::kScratch, static_cast<uint64_t>(n) * p.off + static_cast<uint64_t>(k) * p.len,
              static_cast<uint64_t>(num) * p.len);
  }
  // The piece of absolute rank j's block in buffer b.
  Region Block(Buf b, int j) const { return Rg(b, static_cast<uint64_t>(j) * count + p.off, p.len); }
  // Relative ranks [m, m + num) as one region of the root's buffer b, if contiguous there.
  bool Direct(int m, int num) const { return p.len == count && Abs(m) + num <= n; }
  Region DirectRegion(Buf b, int m, int num) const {
    return Rg(b, static_cast<uint64_t>(Abs(m)) * count, static_cast<uint64_t>(num) * count);
  }
};

}  // namespace

using binomial::ChildOffsets;
using binomial::LowBit;
using binomial::SubtreeEnd;

Schedule BinomialGather(const CollArgs& a) {
  if (a.nranks == 1) return SingleRank(a);
  const int n = a.nranks, v = Mod(a.rank - a.root, n);
  const std::vector<int> ms = ChildOffsets(v, n);
  const int size = SubtreeEnd(v, n) - v;
  Schedule s;
  for (const Span& p : Pieces(a.count, a.nchannels, a.chunk)) {
    const Ctx c{n, a.root, v, a.count, p};
    Stream& st = s.streams.emplace_back();
    if (ms.empty()) {  // a leaf (never the root when n >= 2)
      AddSend(st.steps.emplace_back(), c.Abs(v - LowBit(v, n)), Rg(Buf::kInput, p));
      continue;
    }
    Step& step = st.steps.emplace_back();
    for (int m : ms) {
      const int num = SubtreeEnd(v + m, n) - (v + m);
      if (v == 0 && c.Direct(m, num)) {
        AddRecv(step, c.Abs(m), c.DirectRegion(Buf::kOutput, m, num));
        continue;
      }
      AddRecv(step, c.Abs(v + m), c.Slots(m, num));
      if (v == 0)
        AddBlockCopies(step, num, p.len, [&](int k) { return c.Slots(m + k, 1); },
                       [&](int k) { return c.Block(Buf::kOutput, c.Abs(m + k)); });
    }
    if (v == 0) {
      AddCopy(step, c.Block(Buf::kOutput, a.root), Rg(Buf::kInput, p));
      continue;
    }
    AddCopy(step, c.Slots(0, 1), Rg(Buf::kInput, p));
    AddSend(st.steps.emplace_back(), c.Abs(v - LowBit(v, n)), c.Slots(0, size));
  }
  return Finish(std::move(s));
}

Schedule BinomialScatter(const CollArgs& a) {
  if (a.nranks == 1) return SingleRank(a);
  const int n = a.nranks, v = Mod(a.rank - a.root, n);
  const std::vector<int> ms = ChildOffsets(v, n);
  const int size = SubtreeEnd(v, n) - v;
  Schedule s;
  for (const Span& p : Pieces(a.count, a.nchannels, a.chunk)) {
    const Ctx c{n, a.root, v, a.count, p};
    Stream& st = s.streams.emplace_back();
    const Region out = Rg(Buf::kOutput, p);
    if (v == 0) {
      Step& pack = st.steps.emplace_back();
      AddCopy(pack, out, c.Block(Buf::kInput, a.root));
      for (int m : ms) {
        const int num = SubtreeEnd(m, n) - m;
        if (!c.Direct(m, num))
          AddBlockCopies(pack, num, p.len, [&](int k) { return c.Block(Buf::kInput, c.Abs(m + k)); },
                         [&](int k) { return c.Slots(m + k, 1); });
      }
      for (size_t i = ms.size(); i-- > 0;) {
        const int m = ms[i], num = SubtreeEnd(m, n) - m;
        AddSend(st.steps.emplace_back(), c.Abs(m),
                c.Direct(m, num) ? c.DirectRegion(Buf::kInput, m, num) : c.Slots(m, num));
      }
      continue;
    }
    const int parent = c.Abs(v - LowBit(v, n));
    if (ms.empty()) {
      AddRecv(st.steps.emplace_back(), parent, out);
      continue;
    }
    Step& first = st.steps.emplace_back();
    AddRecv(first, parent, c.Slots(0, size));
    AddCopy(first, out, c.Slots(0, 1));
    for (size_t i = ms.size(); i-- > 0;) {
      const int m = ms[i], num = SubtreeEnd(v + m, n) - (v + m);
      AddSend(st.steps.emplace_back(), c.Abs(v + m), c.Slots(m, num));
    }
  }
  return Finish(std::move(s));
}

}  // namespace tutti::algo
