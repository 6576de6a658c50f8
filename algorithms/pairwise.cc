// Pairwise-exchange all-to-all.
//
// Step s = 1..n-1: send input block (r + s) mod n to rank r + s, receive output block
// (r - s) mod n from rank r - s. The first step also copies the own input block r to output
// block r. Every rank sends and receives (n-1)/n of its data; with `nchannels` / `chunk` each
// piece of every block is its own stream.
#include "algorithms/pairwise.h"

#include "algorithms/common.h"

namespace tutti::algo {

Schedule PairwiseAllToAll(const CollArgs& a) {
  if (a.nranks == 1) return SingleRank(a);
  const int n = a.nranks, r = a.rank;
  Schedule s;
  for (const Span& p : Pieces(a.count, a.nchannels, a.chunk)) {
    Stream& st = s.streams.emplace_back();
    auto blk = [&](Buf b, int j) { return Rg(b, static_cast<uint64_t>(Mod(j, n)) * a.count + p.off, p.len); };
    for (int k = 1; k < n; ++k) {
      Step& step = st.steps.emplace_back();
      AddSend(step, Mod(r + k, n), blk(Buf::kInput, r + k));
      AddRecv(step, Mod(r - k, n), blk(Buf::kOutput, r - k));
      if (k == 1) AddCopy(step, blk(Buf::kOutput, r), blk(Buf::kInput, r));
    }
  }
  return Finish(std::move(s));
}

}  // namespace tutti::algo
