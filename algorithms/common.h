// Shared rank arithmetic and small builders for the schedule generators (algorithms/*.cc).
//
// Data splitting, the same for every algorithm: the per-rank count is cut into `nchannels`
// shares (as evenly as possible, empty shares dropped), each share into pieces of at most
// `chunk` elements (chunk 0: the algorithm's default), and each piece is one Stream running the
// whole algorithm on its sub-range. For block-structured collectives (all_gather, gather, ...)
// a piece [off, off+len) is that sub-range of every rank's block. Pieces are balanced too, and
// the total number of streams is capped at kMaxStreams (pieces grow instead). Exception: ring
// all_reduce reads `chunk` as its largest message, so its pieces are chunk * n elements.
// Defaults (chunk 0): kDefaultChunk for the pipelined algorithms (ring, chain, tree, binomial
// and flat broadcast/reduce) and for flat all_gather and pairwise all_to_all; no cutting beyond
// channels for the others (rhd, bruck, binomial and flat gather/scatter).
#pragma once

#include <cstdint>
#include <vector>

#include "algorithms/schedule.h"

namespace tutti::algo {

constexpr int kMaxStreams = 256;
// Default piece for the pipelined algorithms (chain, tree, ring): 128 Ki elements.
constexpr uint64_t kDefaultChunk = uint64_t{1} << 17;

struct Span {
  uint64_t off = 0;
  uint64_t len = 0;
};

// Part i of [0, total) cut into `parts` contiguous parts whose sizes differ by at most one
// (the first total % parts parts are one larger).
inline Span SplitEven(uint64_t total, uint64_t parts, uint64_t i) {
  const uint64_t q = total / parts, r = total % parts;
  return {i * q + (i < r ? i : r), q + (i < r ? 1 : 0)};
}

inline int Mod(int64_t a, int n) { return static_cast<int>(((a % n) + n) % n); }

// a * b, or UINT64_MAX when it overflows.
inline uint64_t SatMul(uint64_t a, uint64_t b) {
  return (b != 0 && a > UINT64_MAX / b) ? UINT64_MAX : a * b;
}

// The non-empty pieces of [0, count) as described above; `chunk` 0 means one piece per share.
// At most max(max_streams, number of shares) pieces.
std::vector<Span> Pieces(uint64_t count, int nchannels, uint64_t chunk, uint64_t max_streams = kMaxStreams);

inline Region Rg(Buf b, uint64_t off, uint64_t len) { return Region{b, off, len}; }
inline Region Rg(Buf b, Span s) { return Region{b, s.off, s.len}; }

// Builders that drop empty transfers and operations (every rank drops the same ones, because
// all sizes are computed from the same global arithmetic).
void AddSend(Step& s, int peer, Region r);
void AddRecv(Step& s, int peer, Region r);
void AddCopy(Step& s, Region dst, Region src);
void AddReduce(Step& s, Region dst, std::vector<Region> srcs);

// Copies `nblocks` blocks of `len` elements: block k from src_at(k) to dst_at(k), merging
// neighbouring blocks into one copy where both sides are contiguous.
template <typename SrcAt, typename DstAt>
void AddBlockCopies(Step& s, int nblocks, uint64_t len, SrcAt src_at, DstAt dst_at) {
  int k = 0;
  while (k < nblocks) {
    Region src = src_at(k), dst = dst_at(k);
    int j = k + 1;
    while (j < nblocks) {
      Region ns = src_at(j), nd = dst_at(j);
      if (ns.buf != src.buf || nd.buf != dst.buf || ns.offset != src.offset + src.count ||
          nd.offset != dst.offset + dst.count)
        break;
      src.count += len;
      dst.count += len;
      ++j;
    }
    AddCopy(s, dst, src);
    k = j;
  }
}

// Drops empty steps (never streams: a stream's index is its identity on every rank) and sets scratch_count to the extent of scratch used.
Schedule Finish(Schedule s);

// The schedule of a world of one rank: a copy of the input to the output where the collective
// has both (all collectives but the barrier).
Schedule SingleRank(const CollArgs& a);

}  // namespace tutti::algo
