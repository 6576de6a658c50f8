// Schedules of the v-collectives (MPI's alltoallv, allgatherv, gatherv, scatterv and a
// reduce_scatter with a count per rank): every rank's block has its own count and place.
//
// Each rank exchanges its blocks directly with their owners, up to `fanout` peers per step
// (rank + 1, rank + 2, ... in turn, so that the ranks' partners differ in each step), and copies
// its own block locally. Every message is sent even when its block is empty, so that two ranks
// that disagree about a block's count fail with a size mismatch instead of waiting for a message
// the other never sends. Regions are in elements, as in schedule.h.
#pragma once

#include <cstdint>
#include <vector>

#include "algorithms/schedule.h"
#include "core/base/status.h"

namespace tutti::algo {

// Where each rank's block lies in a buffer: counts[r] elements from displs[r].
struct VBlocks {
  std::vector<uint64_t> counts;
  std::vector<uint64_t> displs;
  // counts laid end to end in rank order.
  static VBlocks Packed(const std::vector<uint64_t>& counts);
  // Elements the buffer must have: the furthest block end.
  uint64_t Extent() const;
};

// n ranks, counts and displs of n entries each, every block inside 2^62 elements; blocks of one
// buffer that a rank writes must not overlap. InvalidArgument naming `what` otherwise.
Status ValidateBlocks(const VBlocks& b, int n, const char* what, bool written);

// send.counts[j] elements of the input go to rank j, into its recv blocks[rank].
Schedule AllToAllV(int n, int rank, const VBlocks& send, const VBlocks& recv, int fanout = 8);
// This rank's `count` input elements go into every rank's recv block[rank].
Schedule AllGatherV(int n, int rank, uint64_t count, const VBlocks& recv, int fanout = 8);
// Into the root's recv blocks; `recv` is read at the root only.
Schedule GatherV(int n, int rank, int root, uint64_t count, const VBlocks& recv, int fanout = 8);
// From the root's send blocks; `send` is read at the root only.
Schedule ScatterV(int n, int rank, int root, const VBlocks& send, uint64_t count, int fanout = 8);
// Input: counts[0] + ... + counts[n-1] elements, rank j's block at the sum of the counts before
// it; output: counts[rank] elements, the reduction over the ranks' blocks `rank`, combined in
// rank order (the same bits on every run). Needs (n-1) * counts[rank] elements of scratch.
Schedule ReduceScatterV(int n, int rank, const std::vector<uint64_t>& counts, int fanout = 8);

}  // namespace tutti::algo
