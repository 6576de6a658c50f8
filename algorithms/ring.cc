// Ring reduce-scatter, all-gather and all-reduce.
//
// Every rank sends to next = r+1 and receives from prev = r-1 (mod n). Data: the per-rank count
// is cut into channel shares and pieces (common.h); each piece is one stream running its own
// ring. For all_reduce `chunk` is the largest message: a piece is chunk * n elements, cut into
// n blocks as evenly as possible (empty blocks send nothing). For reduce_scatter / all_gather a
// piece is a sub-range of at most `chunk` elements of every rank's block.
//
// all_reduce, per piece with blocks B_0..B_{n-1}: reduce-scatter for n-1 steps (step k: send
// block r-k, receive the partial of block r-k-1 into a scratch slot and reduce it there with the
// own input; the last step reduces into the output instead), after which rank r holds the
// finished block r+1; then all-gather for n-1 steps (step k: send block r+1-k, receive block
// r-k). 2(n-1) steps, 2(n-1)/n of the data sent per rank. Scratch: two slots of the largest
// block per stream (one for n = 2), about 2/n of the count in all.
//
// IN PLACE (input == output): nothing is received into the output before the reduce-scatter is
// over. Block b's input is read once, by the reduction that consumes the received partial, and
// when that reduction writes the output it writes exactly block b's storage (read in the same
// pass); the own block r's input is only sent, at step 0. The all-gather then receives into
// blocks whose input has been consumed. reduce_scatter likewise receives only into scratch and
// writes the output (the input's own block) only with the last reduction, which reads it.
//
// REDUCTION ORDER. all_reduce: block j is a left fold over ranks j, j+1, ..., j+n-1 (mod n):
// ((x_j op x_{j+1}) op x_{j+2}) ... op x_{j-1}, computed once by the ranks along the ring and
// then copied to everyone, so all ranks hold the same bits. reduce_scatter: block j (the one
// rank j receives) is the left fold over ranks j+1, j+2, ..., j+n-1, j (its owner last).
#include "algorithms/common.h"
#include "algorithms/ring.h"

namespace tutti::algo {

Schedule RingAllReduce(const CollArgs& a) {
  if (a.nranks == 1) return SingleRank(a);
  const int n = a.nranks, r = a.rank, next = Mod(r + 1, n), prev = Mod(r - 1, n);
  Schedule s;
  const uint64_t piece = SatMul(a.chunk == 0 ? kDefaultChunk : a.chunk, static_cast<uint64_t>(n));
  const uint64_t nslots = n == 2 ? 1 : 2;
  uint64_t scratch_base = 0;  // this stream's slots: [scratch_base, + nslots * largest block)
  for (const Span& p : Pieces(a.count, a.nchannels, piece)) {
    Stream& st = s.streams.emplace_back();
    auto blk = [&](int j) {
      Span b = SplitEven(p.len, static_cast<uint64_t>(n), static_cast<uint64_t>(Mod(j, n)));
      return Span{p.off + b.off, b.len};
    };
    const uint64_t largest = SplitEven(p.len, static_cast<uint64_t>(n), 0).len;
    auto slot = [&](int k, uint64_t len) {
      return Rg(Buf::kScratch, scratch_base + static_cast<uint64_t>(k) % nslots * largest, len);
    };
    for (int k = 0; k < n - 1; ++k) {  // reduce-scatter
      Step& step = st.steps.emplace_back();
      const Span sent = blk(r - k), in = blk(r - k - 1);
      AddSend(step, next, k == 0 ? Rg(Buf::kInput, sent) : slot(k - 1, sent.len));
      const Region acc = slot(k, in.len);
      AddRecv(step, prev, acc);
      AddReduce(step, k == n - 2 ? Rg(Buf::kOutput, in) : acc, {acc, Rg(Buf::kInput, in)});
    }
    scratch_base += nslots * largest;
    for (int k = 0; k < n - 1; ++k) {  // all-gather of the finished blocks
      Step& step = st.steps.emplace_back();
      AddSend(step, next, Rg(Buf::kOutput, blk(r + 1 - k)));
      AddRecv(step, prev, Rg(Buf::kOutput, blk(r - k)));
    }
  }
  return Finish(std::move(s));
}

// Piece [off, len) of every block; rank r ends with block r. Step k sends block r-k-1 and
// receives block r-k-2 into alternating scratch slots (the running partial, reduced in place
// with the own input's block); the last step (block r) reduces its slot with the own input's
// block r into the output. Scratch: two slots per piece (one for n = 2).
Schedule RingReduceScatter(const CollArgs& a) {
  if (a.nranks == 1) return SingleRank(a);
  const int n = a.nranks, r = a.rank, next = Mod(r + 1, n), prev = Mod(r - 1, n);
  Schedule s;
  for (const Span& p : Pieces(a.count, a.nchannels, a.chunk == 0 ? kDefaultChunk : a.chunk)) {
    Stream& st = s.streams.emplace_back();
    auto in_blk = [&](int j) { return Rg(Buf::kInput, static_cast<uint64_t>(Mod(j, n)) * a.count + p.off, p.len); };
    const uint64_t nslots = n == 2 ? 1 : 2;
    auto slot = [&](int k) {
      return Rg(Buf::kScratch, nslots * p.off + static_cast<uint64_t>(k) % nslots * p.len, p.len);
    };
    for (int k = 0; k < n - 1; ++k) {
      Step& step = st.steps.emplace_back();
      AddSend(step, next, k == 0 ? in_blk(r - 1) : slot(k - 1));
      const Region acc = slot(k);
      AddRecv(step, prev, acc);
      AddReduce(step, k == n - 2 ? Rg(Buf::kOutput, p.off, p.len) : acc, {acc, in_blk(r - k - 2)});
    }
  }
  return Finish(std::move(s));
}

// Piece [off, len) of every block. Step 0 sends the own input and copies it to output block r;
// step k sends block r-k (received at step k-1) and receives block r-k-1.
Schedule RingAllGather(const CollArgs& a) {
  if (a.nranks == 1) return SingleRank(a);
  const int n = a.nranks, r = a.rank, next = Mod(r + 1, n), prev = Mod(r - 1, n);
  Schedule s;
  for (const Span& p : Pieces(a.count, a.nchannels, a.chunk == 0 ? kDefaultChunk : a.chunk)) {
    Stream& st = s.streams.emplace_back();
    auto out_blk = [&](int j) { return Rg(Buf::kOutput, static_cast<uint64_t>(Mod(j, n)) * a.count + p.off, p.len); };
    for (int k = 0; k < n - 1; ++k) {
      Step& step = st.steps.emplace_back();
      AddSend(step, next, k == 0 ? Rg(Buf::kInput, p) : out_blk(r - k));
      AddRecv(step, prev, out_blk(r - k - 1));
      if (k == 0) AddCopy(step, out_blk(r), Rg(Buf::kInput, p));
    }
  }
  return Finish(std::move(s));
}

}  // namespace tutti::algo
