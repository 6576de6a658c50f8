// Recursive halving (reduce-scatter) and recursive doubling (all-gather), any n.
//
// Let p be the largest power of two <= n and rem = n - p. Fold: for i < rem, rank 2i sends its
// whole input to rank 2i+1, which reduces it with its own and stands for both; rank 2i then
// waits for the end. The p remaining ranks get new ranks 0..p-1 (rank 2i+1 -> i for i < rem,
// rank r >= 2 rem -> r - rem), in rank order. The data is divided among new ranks: new rank i
// owns [bound(i), bound(i+1)) — for all_reduce the count cut into p parts as evenly as possible,
// for reduce_scatter the blocks of the rank(s) it stands for (2i and 2i+1, or i + rem).
// Halving: the group of new ranks [0, p) is halved log2 p times (distance p/2 first); at each
// step a rank sends the half of its group's range that the partner group owns, receives its own
// half from the partner into scratch, and reduces it. Then every new rank holds its fully
// reduced range. reduce_scatter: rank 2i+1 sends block 2i to rank 2i (unfold). all_reduce:
// doubling (distance 1 first) exchanges ranges until every new rank has everything, then rank
// 2i+1 sends the whole result to rank 2i. 2 log2 p steps (+2 when n is not a power of two).
// all_reduce uses channels (each share runs the whole algorithm); reduce_scatter is one stream
// (nchannels and chunk are ignored: its ranges span several blocks).
//
// REDUCTION ORDER: fold pairs combine (x_{2i} op x_{2i+1}); a halving step combines
// (lower new rank's partial) op (upper new rank's partial). So with P_i the partial of new rank
// i, the result is a balanced tree over new ranks in which distance p/2 is combined first:
// for p = 4, (P_0 op P_2) op (P_1 op P_3). Each range is reduced by exactly one rank and then
// copied, so all ranks hold the same bits.
#include "algorithms/rhd.h"

#include <functional>

#include "algorithms/common.h"

namespace tutti::algo {
namespace {

struct Rhd {
  int n, r, p, rem, nr;  // nr: new rank, or -1 for a folded-away even rank
  Rhd(int n_, int r_) : n(n_), r(r_) {
    p = 1;
    while (p * 2 <= n) p *= 2;
    rem = n - p;
    nr = r < 2 * rem ? (r % 2 == 1 ? r / 2 : -1) : r - rem;
  }
  int OldRank(int i) const { return i < rem ? 2 * i + 1 : i + rem; }
};

// The halving part shared by both collectives. `bound(i)` is where new rank i's range starts
// (as an offset into the buffers); `cur` holds this rank's partial of the whole data (input,
// or the fold's result); partials after each step go to `part` at the same offsets, received
// halves to `tmp` at tmp_base. The last step's reduction (of data [lo, hi), sources lower new
// rank first) is left to `last`.
struct HalvingIo {
  std::function<uint64_t(int)> bound;
  Buf cur;
  Buf part;
  Buf tmp;
  uint64_t tmp_base = 0;
};

void Halving(const Rhd& h, const HalvingIo& io, Stream& st,
             const std::function<void(Step&, const std::vector<Region>& lower_first, uint64_t lo, uint64_t hi)>& last) {
  Buf cur = io.cur;
  int lo = 0, hi = h.p;
  while (hi - lo > 1) {
    const int half = (hi - lo) / 2, mid = lo + half;
    const bool lower = h.nr < mid;
    const int partner = h.OldRank(lower ? h.nr + half : h.nr - half);
    const int keep_lo = lower ? lo : mid, keep_hi = lower ? mid : hi;
    const int give_lo = lower ? mid : lo, give_hi = lower ? hi : mid;
    const uint64_t k0 = io.bound(keep_lo), k1 = io.bound(keep_hi);
    const uint64_t g0 = io.bound(give_lo), g1 = io.bound(give_hi);
    Step& step = st.steps.emplace_back();
    AddSend(step, partner, Rg(cur, g0, g1 - g0));
    const Region mine = Rg(cur, k0, k1 - k0);
    const Region got = Rg(io.tmp, io.tmp_base, k1 - k0);  // compact: reused every step
    AddRecv(step, partner, got);
    const std::vector<Region> srcs = lower ? std::vector<Region>{mine, got} : std::vector<Region>{got, mine};
    if (keep_hi - keep_lo == 1) {
      last(step, srcs, k0, k1);
    } else {
      AddReduce(step, Rg(io.part, k0, k1 - k0), srcs);
    }
    cur = io.part;
    lo = keep_lo;
    hi = keep_hi;
  }
}

}  // namespace

Schedule RhdAllReduce(const CollArgs& a) {
  if (a.nranks == 1) return SingleRank(a);
  const Rhd h(a.nranks, a.rank);
  Schedule s;
  for (const Span& p : Pieces(a.count, a.nchannels, a.chunk)) {
    Stream& st = s.streams.emplace_back();
    const Region in = Rg(Buf::kInput, p), out = Rg(Buf::kOutput, p);
    if (h.nr < 0) {  // folded away: hand over the input, get the result at the end
      AddSend(st.steps.emplace_back(), a.rank + 1, in);
      AddRecv(st.steps.emplace_back(), a.rank + 1, out);
      continue;
    }
    HalvingIo io{[&](int i) { return p.off + SplitEven(p.len, static_cast<uint64_t>(h.p), static_cast<uint64_t>(i)).off; },
                 Buf::kInput, Buf::kOutput, Buf::kScratch};
    io.tmp_base = p.off;  // this stream's scratch is [p.off, p.off + p.len)
    if (a.rank < 2 * h.rem) {  // fold: receive the even neighbour's input
      Step& step = st.steps.emplace_back();
      AddRecv(step, a.rank - 1, Rg(Buf::kScratch, p));
      AddReduce(step, out, {Rg(Buf::kScratch, p), in});
      io.cur = Buf::kOutput;
    }
    Halving(h, io, st, [&](Step& step, const std::vector<Region>& srcs, uint64_t lo, uint64_t hi) {
      AddReduce(step, Rg(Buf::kOutput, lo, hi - lo), srcs);
    });
    for (int dist = 1; dist < h.p; dist *= 2) {  // doubling
      const int mine = h.nr & ~(dist - 1), theirs = mine ^ dist;
      const uint64_t m0 = io.bound(mine), m1 = io.bound(mine + dist);
      const uint64_t t0 = io.bound(theirs), t1 = io.bound(theirs + dist);
      Step& step = st.steps.emplace_back();
      AddSend(step, h.OldRank(h.nr ^ dist), Rg(Buf::kOutput, m0, m1 - m0));
      AddRecv(step, h.OldRank(h.nr ^ dist), Rg(Buf::kOutput, t0, t1 - t0));
    }
    if (a.rank < 2 * h.rem) AddSend(st.steps.emplace_back(), a.rank - 1, out);
  }
  return Finish(std::move(s));
}

Schedule RhdReduceScatter(const CollArgs& a) {
  if (a.nranks == 1) return SingleRank(a);
  const Rhd h(a.nranks, a.rank);
  const uint64_t n = static_cast<uint64_t>(a.nranks), all = n * a.count;
  Schedule s;
  if (a.count == 0) return s;
  Stream& st = s.streams.emplace_back();
  const Region out = Rg(Buf::kOutput, 0, a.count);
  if (h.nr < 0) {
    AddSend(st.steps.emplace_back(), a.rank + 1, Rg(Buf::kInput, 0, all));
    AddRecv(st.steps.emplace_back(), a.rank + 1, out);
    return Finish(std::move(s));
  }
  // Partials live in scratch [0, all) at the data's offsets; received halves in [all, ...).
  HalvingIo io{[&](int i) {
                 if (i >= h.p) return all;
                 const uint64_t first = i < h.rem ? 2 * static_cast<uint64_t>(i) : static_cast<uint64_t>(i + h.rem);
                 return first * a.count;
               },
               Buf::kInput, Buf::kScratch, Buf::kScratch};
  io.tmp_base = all;
  if (a.rank < 2 * h.rem) {
    Step& step = st.steps.emplace_back();
    AddRecv(step, a.rank - 1, Rg(Buf::kScratch, 0, all));
    AddReduce(step, Rg(Buf::kScratch, 0, all), {Rg(Buf::kScratch, 0, all), Rg(Buf::kInput, 0, all)});
    io.cur = Buf::kScratch;
  }
  Halving(h, io, st, [&](Step& step, const std::vector<Region>& srcs, uint64_t lo, uint64_t hi) {
    // One block per rank this new rank stands for; its own goes straight to the output.
    for (uint64_t b = lo / a.count; b < hi / a.count; ++b) {
      std::vector<Region> part;
      for (const Region& r : srcs) part.push_back(Rg(r.buf, r.offset + (b * a.count - lo), a.count));
      AddReduce(step, b == static_cast<uint64_t>(a.rank) ? out : Rg(Buf::kScratch, b * a.count, a.count), part);
    }
  });
  if (a.rank < 2 * h.rem)
    AddSend(st.steps.emplace_back(), a.rank - 1, Rg(Buf::kScratch, static_cast<uint64_t>(a.rank - 1) * a.count, a.count));
  return Finish(std::move(s));
}

}  // namespace tutti::algo
