// Double binary tree all_reduce.
//
// Tree 0 is the in-order binary tree over positions q = 1..n: the root of a range of positions
// is its element divisible by the largest power of two, its left and right subtrees are the
// ranges on either side. Odd positions are exactly the leaves, so interior nodes are the even
// positions. Tree 0 puts rank r at q = r + 1 (interior: odd ranks). Tree 1 puts rank r at
// q = n - r (mirrored) when n is even, at q = ((r + 1) mod n) + 1 (shifted) when n is odd;
// either way its interior nodes are even ranks, so every rank is interior in at most one tree
// (for odd n, rank n-1 is a leaf in both). Depth is about log2 n in both.
//
// Data: each channel share is cut in two halves, the first reduced and broadcast over tree 0,
// the second over tree 1; each half is cut into pieces of at most `chunk` elements (default
// kDefaultChunk), each piece its own stream, so the pieces pipeline up and down the trees.
// Per piece, an interior node receives both children's partials into scratch (one step),
// reduces them with its input, then sends the partial up while receiving the final result from
// its parent into the output (one step), then sends the result to its children. Leaves send
// their input up (one step), then receive the result into the output (the next step: the
// parent sends it only after this leaf's partial arrived, so the split costs no wait). The root
// reduces into its output.
//
// IN PLACE (input == output): a node's input is read by its up-going send (leaf) or reduction
// (interior) before anything is received into its output: a leaf's receive is a later step than
// its send, an interior node's partial goes up from scratch, and the root's reduction writes
// exactly its input's storage in the pass that reads it.
//
// REDUCTION ORDER: every node combines (left subtree) op (own input) op (right subtree) in one
// pass, so each element is reduced over the tree's positions in in-order (ascending q),
// bracketed by the tree: tree 0 in rank order 0, 1, ..., n-1; tree 1 in order n-1, ..., 1, 0
// (n even) or n-1, 0, 1, ..., n-2 (n odd). Each element is reduced once, at one tree's nodes,
// and the root's result is broadcast, so all ranks hold the same bits.
#include "algorithms/tree.h"

#include "algorithms/common.h"

namespace tutti::algo {
namespace {

// The element of [lo, hi] (1 <= lo <= hi) divisible by the largest power of two.
int RangeRoot(int lo, int hi) {
  for (int k = 30; k >= 0; --k) {
    const int x = (hi >> k) << k;
    if (x >= lo && x > 0) return x;
  }
  return lo;
}

int PositionOf(int n, int t, int r) {
  if (t == 0) return r + 1;
  return n % 2 == 0 ? n - r : Mod(r + 1, n) + 1;
}

int RankAt(int n, int t, int q) {
  if (t == 0) return q - 1;
  return n % 2 == 0 ? n - q : Mod(q - 2, n);
}

}  // namespace

TreeNode DoubleTreeNode(int n, int t, int r) {
  const int q = PositionOf(n, t, r);
  int lo = 1, hi = n, parent = 0;
  while (true) {
    const int root = RangeRoot(lo, hi);
    if (root == q) break;
    parent = root;
    if (q < root) hi = root - 1;
    else lo = root + 1;
  }
  TreeNode node;
  if (parent != 0) node.parent = RankAt(n, t, parent);
  if (q > lo) node.left = RankAt(n, t, RangeRoot(lo, q - 1));
  if (q < hi) node.right = RankAt(n, t, RangeRoot(q + 1, hi));
  return node;
}

Schedule TreeAllReduce(const CollArgs& a) {
  if (a.nranks == 1) return SingleRank(a);
  const int n = a.nranks;
  const TreeNode nodes[2] = {DoubleTreeNode(n, 0, a.rank), DoubleTreeNode(n, 1, a.rank)};
  const uint64_t chunk = a.chunk == 0 ? kDefaultChunk : a.chunk;
  Schedule s;
  const std::vector<Span> shares = Pieces(a.count, a.nchannels, 0);
  const uint64_t max_pieces = kMaxStreams / (2 * std::max<size_t>(shares.size(), 1));
  for (const Span& share : shares) {
    for (int t = 0; t < 2; ++t) {
      const Span half = SplitEven(share.len, 2, static_cast<uint64_t>(t));
      const TreeNode& nd = nodes[t];
      for (const Span& pc : Pieces(half.len, 1, chunk, max_pieces)) {
        const Span p{share.off + half.off + pc.off, pc.len};
        Stream& st = s.streams.emplace_back();
        const Region in = Rg(Buf::kInput, p), out = Rg(Buf::kOutput, p);
        const Region lbuf = Rg(Buf::kScratch, 2 * p.off, p.len);
        const Region rbuf = Rg(Buf::kScratch, 2 * p.off + p.len, p.len);
        if (nd.left < 0 && nd.right < 0) {  // leaf: send up, then receive (in place: same storage)
          AddSend(st.steps.emplace_back(), nd.parent, in);
          AddRecv(st.steps.emplace_back(), nd.parent, out);
          continue;
        }
        const Region acc = nd.parent < 0 ? out : lbuf;
        Step& up = st.steps.emplace_back();
        std::vector<Region> srcs;
        if (nd.left >= 0) {
          AddRecv(up, nd.left, lbuf);
          srcs.push_back(lbuf);
        }
        srcs.push_back(in);
        if (nd.right >= 0) {
          AddRecv(up, nd.right, rbuf);
          srcs.push_back(rbuf);
        }
        AddReduce(up, acc, std::move(srcs));
        if (nd.parent >= 0) {
          Step& mid = st.steps.emplace_back();
          AddSend(mid, nd.parent, acc);
          AddRecv(mid, nd.parent, out);
        }
        Step& down = st.steps.emplace_back();
        if (nd.left >= 0) AddSend(down, nd.left, out);
        if (nd.right >= 0) AddSend(down, nd.right, out);
      }
    }
  }
  return Finish(std::move(s));
}

}  // namespace tutti::algo
