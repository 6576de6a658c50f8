// Flat (one-step) rooted collectives (see flat.h). Every piece of the data (common.h's Pieces)
// is a stream of one step. The root addresses the other ranks in ascending relative rank
// (root + 1, root + 2, ... mod n).
//
// Broadcast: the root sends its input to every rank and copies it to its output; the others
// receive into their output. Pipelined in kDefaultChunk pieces, as binomial's.
// Reduce: every rank sends its input to the root, which receives rank root + k's piece into
// scratch slot k - 1 and reduces in one pass.
// REDUCTION ORDER (reduce): out = x_root op x_(root+1) op ... op x_(root+n-1), left to right in
// ascending relative rank (in reductions of up to 8 sources, the partial carried on).
// Gather / scatter: the root receives every block straight into its output (sends it straight
// from its input); no scratch.
// All-gather: every rank is a gather's root at once: it sends its input to ranks r+1, r+2, ...
// and receives rank r-k's block straight into its output, in kDefaultChunk pieces (as ring's:
// on one host each piece is then read one-sidedly, in one copy); no scratch, nothing forwarded,
// so no rank waits for a rank between it and the source. In place the input is the output's
// own block, which only the sends read.
#include "algorithms/flat.h"

#include "algorithms/common.h"

namespace tutti::algo {
namespace {

constexpr size_t kMaxSources = 8;

// One stream of one step per piece: `root(step, piece)` on the root, `other(step, piece)` on the
// other ranks.
template <typename Root, typename Other>
Schedule OneStep(const CollArgs& a, uint64_t chunk, Root root, Other other) {
  if (a.nranks == 1) return SingleRank(a);
  Schedule s;
  for (const Span& p : Pieces(a.count, a.nchannels, chunk)) {
    Step& step = s.streams.emplace_back().steps.emplace_back();
    if (a.rank == a.root) {
      root(step, p);
    } else {
      other(step, p);
    }
  }
  return Finish(std::move(s));
}

// The other ranks in ascending relative rank: f(k, rank) for k = 1 .. n-1.
template <typename F>
void ForOthers(const CollArgs& a, F f) {
  for (int k = 1; k < a.nranks; ++k) f(k, Mod(a.root + k, a.nranks));
}

// The piece `p` of absolute rank j's block of a gather's output or a scatter's input.
Region Block(Buf b, const CollArgs& a, int j, const Span& p) {
  return Rg(b, static_cast<uint64_t>(j) * a.count + p.off, p.len);
}

uint64_t Pipelined(const CollArgs& a) { return a.chunk == 0 ? kDefaultChunk : a.chunk; }

}  // namespace

Schedule FlatBroadcast(const CollArgs& a) {
  return OneStep(
      a, Pipelined(a),
      [&](Step& step, const Span& p) {
        ForOthers(a, [&](int, int j) { AddSend(step, j, Rg(Buf::kInput, p)); });
        AddCopy(step, Rg(Buf::kOutput, p), Rg(Buf::kInput, p));
      },
      [&](Step& step, const Span& p) { AddRecv(step, a.root, Rg(Buf::kOutput, p)); });
}

Schedule FlatReduce(const CollArgs& a) {
  return OneStep(
      a, Pipelined(a),
      [&](Step& step, const Span& p) {
        // Scratch: n - 1 slots of this piece, the pieces one after another.
        const uint64_t base = static_cast<uint64_t>(a.nranks - 1) * p.off;
        std::vector<Region> srcs{Rg(Buf::kInput, p)};
        ForOthers(a, [&](int k, int j) {
          const Region slot = Rg(Buf::kScratch, base + static_cast<uint64_t>(k - 1) * p.len, p.len);
          AddRecv(step, j, slot);
          srcs.push_back(slot);
        });
        // Folded left to right in reductions of at most kMaxSources sources each (the lowered
        // device ops take up to 8), each carrying the partial on: the same bits as one pass.
        const Region out = Rg(Buf::kOutput, p);
        for (size_t i = 0; i < srcs.size();) {
          std::vector<Region> part;
          if (i > 0) part.push_back(out);
          while (part.size() < kMaxSources && i < srcs.size()) part.push_back(srcs[i++]);
          AddReduce(step, out, std::move(part));
        }
      },
      [&](Step& step, const Span& p) { AddSend(step, a.root, Rg(Buf::kInput, p)); });
}

Schedule FlatGather(const CollArgs& a) {
  return OneStep(
      a, a.chunk,
      [&](Step& step, const Span& p) {
        ForOthers(a, [&](int, int j) { AddRecv(step, j, Block(Buf::kOutput, a, j, p)); });
        AddCopy(step, Block(Buf::kOutput, a, a.root, p), Rg(Buf::kInput, p));
      },
      [&](Step& step, const Span& p) { AddSend(step, a.root, Rg(Buf::kInput, p)); });
}

Schedule FlatAllGather(const CollArgs& a) {
  if (a.nranks == 1) return SingleRank(a);
  const int n = a.nranks, r = a.rank;
  Schedule s;
  for (const Span& p : Pieces(a.count, a.nchannels, Pipelined(a))) {
    Step& step = s.streams.emplace_back().steps.emplace_back();
    for (int k = 1; k < n; ++k) {
      AddSend(step, Mod(r + k, n), Rg(Buf::kInput, p));
      const int j = Mod(r - k, n);
      AddRecv(step, j, Block(Buf::kOutput, a, j, p));
    }
    AddCopy(step, Block(Buf::kOutput, a, r, p), Rg(Buf::kInput, p));
  }
  return Finish(std::move(s));
}

Schedule FlatScatter(const CollArgs& a) {
  return OneStep(
      a, a.chunk,
      [&](Step& step, const Span& p) {
        ForOthers(a, [&](int, int j) { AddSend(step, j, Block(Buf::kInput, a, j, p)); });
        AddCopy(step, Rg(Buf::kOutput, p), Block(Buf::kInput, a, a.root, p));
      },
      [&](Step& step, const Span& p) { AddRecv(step, a.root, Rg(Buf::kOutput, p)); });
}

}  // namespace tutti::algo
