// "ring" broadcast and reduce: pipelined chains along the ring direction.
//
// Position v = r - root (mod n). Broadcast flows root = v0 -> v1 -> ... -> v(n-1); reduce
// flows v1 -> v2 -> ... -> v(n-1) -> root. The data is cut into pieces of at most `chunk`
// elements (default kDefaultChunk; channels cut it first), each piece its own stream, so piece
// k+1 enters the chain while piece k moves down it: about (n - 2 + pieces) piece-steps.
//
// REDUCTION ORDER (reduce): a left fold over positions 1, 2, ..., n-1 and then the root:
// ((x_{root+1} op x_{root+2}) op ...) op x_{root-1}) op x_root (ranks mod n). Interior ranks
// accumulate in scratch; the root receives into scratch too and reduces it with its input into
// its output, so in place (output == input) the root reads each input element in the very pass
// that overwrites it. Scratch: the piece, on every rank but the chain's start.
#include "algorithms/common.h"
#include "algorithms/ring.h"

namespace tutti::algo {

Schedule ChainBroadcast(const CollArgs& a) {
  if (a.nranks == 1) return SingleRank(a);
  const int n = a.nranks, r = a.rank, v = Mod(r - a.root, n);
  const int next = Mod(r + 1, n), prev = Mod(r - 1, n);
  Schedule s;
  for (const Span& p : Pieces(a.count, a.nchannels, a.chunk == 0 ? kDefaultChunk : a.chunk)) {
    Stream& st = s.streams.emplace_back();
    const Region out = Rg(Buf::kOutput, p);
    if (v == 0) {
      Step& step = st.steps.emplace_back();
      AddSend(step, next, Rg(Buf::kInput, p));
      AddCopy(step, out, Rg(Buf::kInput, p));
      continue;
    }
    AddRecv(st.steps.emplace_back(), prev, out);
    if (v < n - 1) AddSend(st.steps.emplace_back(), next, out);
  }
  return Finish(std::move(s));
}

Schedule ChainReduce(const CollArgs& a) {
  if (a.nranks == 1) return SingleRank(a);
  const int n = a.nranks, r = a.rank, v = Mod(r - a.root, n);
  const int next = Mod(r + 1, n), prev = Mod(r - 1, n);
  Schedule s;
  for (const Span& p : Pieces(a.count, a.nchannels, a.chunk == 0 ? kDefaultChunk : a.chunk)) {
    Stream& st = s.streams.emplace_back();
    const Region in = Rg(Buf::kInput, p);
    if (v == 1) {  // the start of the chain
      AddSend(st.steps.emplace_back(), next, in);
      continue;
    }
    const Region acc = Rg(Buf::kScratch, p);
    Step& step = st.steps.emplace_back();
    AddRecv(step, prev, acc);
    AddReduce(step, v == 0 ? Rg(Buf::kOutput, p) : acc, {acc, in});
    if (v != 0) AddSend(st.steps.emplace_back(), next, acc);
  }
  return Finish(std::move(s));
}

}  // namespace tutti::algo
