// Recursive doubling all_reduce, any n.
//
// Let p be the largest power of two <= n and rem = n - p. Fold, as in rhd.cc: for i < rem,
// rank 2i sends its whole input to rank 2i+1, which reduces (x_{2i} op x_{2i+1}) and stands for
// both; rank 2i waits for the result at the end. The p remaining ranks are new ranks 0..p-1
// (rank 2i+1 -> i for i < rem, rank r >= 2 rem -> r - rem). For distance 1, 2, ..., p/2: a new
// rank sends its whole partial to new rank (itself ^ distance), receives the partner's into
// scratch, and reduces the two, lower new rank's first, into a second scratch range or the
// output by turns (never into what the step sends; the result is copied to the output if it
// ends in scratch). Both partners reduce the same two operands in the same order, so after the
// last step every rank holds the same bits. Then rank 2i+1 sends the result to rank 2i. log2 p steps (+2 when n is not a power of two). Channels
// (and chunks, when asked for) cut the data into pieces that each run the whole algorithm.
//
// REDUCTION ORDER: a balanced tree over new ranks in which distance 1 is combined first: for
// p = 4, ((P_0 op P_1) op (P_2 op P_3)), with P_i the fold's result where new rank i stands for
// two ranks.
#include "algorithms/doubling.h"

#include "algorithms/common.h"

namespace tutti::algo {

Schedule DoublingAllReduce(const CollArgs& a) {
  if (a.nranks == 1) return SingleRank(a);
  int p = 1;
  while (p * 2 <= a.nranks) p *= 2;
  const int rem = a.nranks - p, r = a.rank;
  const int nr = r < 2 * rem ? (r % 2 == 1 ? r / 2 : -1) : r - rem;
  auto old_rank = [&](int i) { return i < rem ? 2 * i + 1 : i + rem; };
  Schedule s;
  for (const Span& piece : Pieces(a.count, a.nchannels, a.chunk)) {
    Stream& st = s.streams.emplace_back();
    const Region in = Rg(Buf::kInput, piece), out = Rg(Buf::kOutput, piece);
    const Region tmp = Rg(Buf::kScratch, piece);  // this stream's scratch: [off, off + len)
    if (nr < 0) {  // folded away: hand over the input, get the result at the end
      AddSend(st.steps.emplace_back(), r + 1, in);
      AddRecv(st.steps.emplace_back(), r + 1, out);
      continue;
    }
    // Partials alternate between `alt` and the output, `alt` first, so that no step reduces into
    // what it sends (not even where the input and output are one storage, in place).
    const Region alt = Rg(Buf::kScratch, a.count + piece.off, piece.len);
    Region cur = in;
    if (r < 2 * rem) {  // fold: the even neighbour's input first
      Step& step = st.steps.emplace_back();
      AddRecv(step, r - 1, tmp);
      AddReduce(step, out, {tmp, in});
      cur = out;
    }
    bool to_alt = true;
    for (int dist = 1; dist < p; dist *= 2) {
      const int partner = nr ^ dist;
      const Region dst = to_alt ? alt : out;
      Step& step = st.steps.emplace_back();
      AddSend(step, old_rank(partner), cur);
      AddRecv(step, old_rank(partner), tmp);
      AddReduce(step, dst, nr < partner ? std::vector<Region>{cur, tmp} : std::vector<Region>{tmp, cur});
      cur = dst;
      to_alt = !to_alt;
    }
    if (cur.buf != Buf::kOutput) AddCopy(st.steps.back(), out, cur);
    if (r < 2 * rem) AddSend(st.steps.emplace_back(), r - 1, out);
  }
  return Finish(std::move(s));
}

}  // namespace tutti::algo
