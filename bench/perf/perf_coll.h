// The collectives tutti_perf measures and the arithmetic nccl-tests uses for them: how a size
// in bytes becomes a per-rank count and buffer sizes, where the in-place buffers sit, the size
// sweep, and the bus-bandwidth factor. Independent of any back-end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tutti::perf {

enum class Coll : uint8_t {
  kAllReduce = 0,
  kAllGather,
  kReduceScatter,
  kBroadcast,
  kReduce,
  kScatter,
  kGather,
  kAllToAll,
  kSendRecv,  // rank r sends to (r+1)%n and receives from (r-1+n)%n at the same time
};
constexpr int kNumColls = 9;

// "all_reduce", "all_gather", ... (the --coll spellings).
const char* CollName(Coll c);
// Accepts the names above, also without the underscore ("allreduce", "sendrecv").
bool ParseColl(const std::string& name, Coll* out);

bool CollReduces(Coll c);  // has a reduction op (all_reduce, reduce_scatter, reduce)
bool CollRooted(Coll c);   // has a root (broadcast, reduce, scatter, gather)
bool CollHasInPlace(Coll c);  // false only for send_recv (a ring of sends cannot share one buffer)

// busbw = algbw x factor: all_reduce 2(n-1)/n; reduce_scatter, all_gather, all_to_all, gather,
// scatter (n-1)/n; broadcast, reduce, send_recv 1.
double BusBwFactor(Coll c, int nranks);

// One row of the sweep: what a size of `bytes` means for a collective on n ranks of `elem`-byte
// elements. count is the per-rank count passed to the collective (as in Communicator); for
// all_gather, reduce_scatter, gather, scatter and all_to_all the size S is the whole array,
// count x n x elem, so count = bytes / (n x elem), rounded down.
struct Plan {
  size_t count = 0;       // per-rank count (the "count" column)
  size_t send_elems = 0;  // elements of the send buffer (of every rank; unused ones included)
  size_t recv_elems = 0;  // elements of the recv buffer
  size_t op_bytes = 0;    // S: bytes of the operation (the "size" column; algbw = S / time)
  // In-place layout within one buffer of max(send_elems, recv_elems) elements: send and recv
  // start at these element offsets (NCCL's: all_gather/gather send = recv + rank x count,
  // reduce_scatter/scatter recv = send + rank x count; otherwise both 0).
  size_t inplace_send_off = 0;
  size_t inplace_recv_off = 0;
  size_t whole_elems() const { return send_elems > recv_elems ? send_elems : recv_elems; }
};
Plan PlanFor(Coll c, size_t bytes, size_t elem, int nranks, int rank);

// The sizes from min_bytes to max_bytes: multiplied by `factor` when factor > 1, else
// increased by `step` (> 0). A zero first size is followed by 1 when multiplying.
std::vector<size_t> SizeSweep(size_t min_bytes, size_t max_bytes, uint64_t factor, size_t step);

}  // namespace tutti::perf
