// Pairwise-exchange all-to-all.
//
// Step t = 1..n-1: send input block (r + t) mod n to rank r + t, receive block (r - t) mod n from
// rank r - t. The first step also copies the own input block r to output block r. Every rank
// sends and receives (n-1)/n of its data; each piece of every block (`nchannels`, and `chunk`,
// kDefaultChunk unless given: within a host each piece is then read one-sidedly, in one copy,
// and the pieces' streams overlap; 2 ranks, 16 MiB, 2-vCPU VM: 2305 us vs 3688 uncut) is its own
// stream.
//
// IN PLACE (input == output, block j of both in one storage block j). Storage block j is read by
// the send to rank j and written by the data from rank j. With t the step receiving from j = r-t,
// the send to j is step n-t:
//  - 2t > n: j's input went out at step n-t < t, so block j is received straight into the output;
//  - 2t <= n: the data is parked and copied into output block j after the send of step n-t (in
//    that step's local ops; the same step when 2t == n). It is parked in storage block r+t-1,
//    whose input went out at step t-1 and which is written (directly, from rank r+t-1) only at
//    step n-t+1; at t = 1 there is no such block, so it is parked in scratch.
// That is floor(n/2) copied blocks per rank, also out of place, unless args.distinct says input
// and output never overlap: then every block is received straight into its place. No schedule of blocking steps can
// do with fewer: of two ranks, at least one must receive the other's block somewhere else first
// (receiving into block j only after sending it, on both sides, deadlocks; in one step, it
// overwrites what is being sent). Scratch: one piece per stream (the count, n >= 2).
#include "algorithms/pairwise.h"

#include "algorithms/common.h"

namespace tutti::algo {

Schedule PairwiseAllToAll(const CollArgs& a) {
  if (a.nranks == 1) return SingleRank(a);
  const int n = a.nranks, r = a.rank;
  Schedule s;
  for (const Span& p : Pieces(a.count, a.nchannels, a.chunk == 0 ? kDefaultChunk : a.chunk)) {
    Stream& st = s.streams.emplace_back();
    auto blk = [&](Buf b, int j) { return Rg(b, static_cast<uint64_t>(Mod(j, n)) * a.count + p.off, p.len); };
    // Where the data received at step t (2t <= n) waits for its block's send.
    auto parked = [&](int t) { return t == 1 ? Rg(Buf::kScratch, p) : blk(Buf::kOutput, r + t - 1); };
    for (int t = 1; t < n; ++t) {
      Step& step = st.steps.emplace_back();
      AddSend(step, Mod(r + t, n), blk(Buf::kInput, r + t));
      AddRecv(step, Mod(r - t, n), a.distinct || 2 * t > n ? blk(Buf::kOutput, r - t) : parked(t));
      if (t == 1) AddCopy(step, blk(Buf::kOutput, r), blk(Buf::kInput, r));
      // The block parked at step n-t, whose input block r+t went out just now.
      if (!a.distinct && 2 * (n - t) <= n) AddCopy(step, blk(Buf::kOutput, r + t), parked(n - t));
    }
  }
  return Finish(std::move(s));
}

}  // namespace tutti::algo
