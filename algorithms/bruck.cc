// Bruck all-gather.
//
// Rank r keeps its blocks in relative order in scratch: slot k holds rank (r + k) mod n's
// block. Slot 0 is its own input. Step i (distance d = 2^i, while d < n) sends slots
// [0, min(d, n - d)) to rank r - d and receives slots [d, d + min(d, n - d)) from rank r + d,
// so after the step slots [0, min(2d, n)) are filled. A final local rotation copies slot k to
// output block (r + k) mod n (two copies with one piece per block). ceil(log2 n) steps,
// (n-1)/n of the data received, plus one local copy of it. Channels and `chunk` cut every
// block (each piece its own stream, with its own slots).
#include "algorithms/bruck.h"

#include "algorithms/common.h"

namespace tutti::algo {

Schedule BruckAllGather(const CollArgs& a) {
  if (a.nranks == 1) return SingleRank(a);
  const int n = a.nranks, r = a.rank;
  Schedule s;
  for (const Span& p : Pieces(a.count, a.nchannels, a.chunk)) {
    Stream& st = s.streams.emplace_back();
    auto slots = [&](int k, int num) {
      return Rg(Buf::kScratch, static_cast<uint64_t>(n) * p.off + static_cast<uint64_t>(k) * p.len,
                static_cast<uint64_t>(num) * p.len);
    };
    auto out_blk = [&](int k) {
      return Rg(Buf::kOutput, static_cast<uint64_t>(Mod(r + k, n)) * a.count + p.off, p.len);
    };
    const Region in = Rg(Buf::kInput, p);
    for (int d = 1; d < n; d *= 2) {
      const int m = d < n - d ? d : n - d;
      Step& step = st.steps.emplace_back();
      AddSend(step, Mod(r - d, n), d == 1 ? in : slots(0, m));
      AddRecv(step, Mod(r + d, n), slots(d, m));
      if (d == 1) {
        if (2 * d < n) AddCopy(step, slots(0, 1), in);  // sent again by later steps
        AddCopy(step, out_blk(0), in);
      }
      if (2 * d >= n)  // last step: rotate into the output
        AddBlockCopies(step, n - 1, p.len, [&](int k) { return slots(k + 1, 1); },
                       [&](int k) { return out_blk(k + 1); });
    }
  }
  return Finish(std::move(s));
}

}  // namespace tutti::algo
