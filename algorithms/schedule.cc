#include "algorithms/schedule.h"

#include <cstdint>

namespace tutti::algo {

const char* CollectiveName(Collective c) {
  switch (c) {
    case Collective::kBroadcast: return "broadcast";
    case Collective::kReduce: return "reduce";
    case Collective::kScatter: return "scatter";
    case Collective::kGather: return "gather";
    case Collective::kAllReduce: return "all_reduce";
    case Collective::kAllGather: return "all_gather";
    case Collective::kReduceScatter: return "reduce_scatter";
    case Collective::kAllToAll: return "all_to_all";
    case Collective::kBarrier: return "barrier";
  }
  return "unknown_collective";
}

const char* BufName(Buf b) {
  switch (b) {
    case Buf::kInput: return "input";
    case Buf::kOutput: return "output";
    case Buf::kScratch: return "scratch";
  }
  return "unknown_buffer";
}

bool IsRooted(Collective c) {
  return c == Collective::kBroadcast || c == Collective::kReduce || c == Collective::kScatter ||
         c == Collective::kGather;
}

bool IsReduction(Collective c) {
  return c == Collective::kReduce || c == Collective::kAllReduce || c == Collective::kReduceScatter;
}

std::string DescribeArgs(const CollArgs& a) {
  std::string s = std::string(CollectiveName(a.coll)) + " nranks=" + std::to_string(a.nranks) +
                  " rank=" + std::to_string(a.rank);
  if (IsRooted(a.coll)) s += " root=" + std::to_string(a.root);
  s += " count=" + std::to_string(a.count) + " nchannels=" + std::to_string(a.nchannels) +
       " chunk=" + std::to_string(a.chunk);
  if (a.distinct) s += " distinct";
  return s;
}

uint64_t BufferCount(const CollArgs& a, Buf b) {
  if (b == Buf::kScratch) return 0;
  const bool in = b == Buf::kInput;
  const bool root = a.rank == a.root;
  const uint64_t n = a.nranks > 0 ? static_cast<uint64_t>(a.nranks) : 0;
  switch (a.coll) {
    case Collective::kBroadcast: return in && !root ? 0 : a.count;
    case Collective::kReduce: return !in && !root ? 0 : a.count;
    case Collective::kScatter: return in ? (root ? n * a.count : 0) : a.count;
    case Collective::kGather: return in ? a.count : (root ? n * a.count : 0);
    case Collective::kAllReduce: return a.count;
    case Collective::kAllGather: return in ? a.count : n * a.count;
    case Collective::kReduceScatter: return in ? n * a.count : a.count;
    case Collective::kAllToAll: return n * a.count;
    case Collective::kBarrier: return 0;
  }
  return 0;
}

uint64_t InPlaceBase(const CollArgs& a, Buf b) {
  const uint64_t rank_block = static_cast<uint64_t>(a.rank) * a.count;
  const bool root = a.rank == a.root;
  switch (a.coll) {
    case Collective::kAllGather: return b == Buf::kInput ? rank_block : 0;
    case Collective::kReduceScatter: return b == Buf::kOutput ? rank_block : 0;
    case Collective::kScatter: return b == Buf::kOutput && root ? rank_block : 0;
    case Collective::kGather: return b == Buf::kInput && root ? rank_block : 0;
    default: return 0;
  }
}

Status ValidateArgs(const CollArgs& a) {
  const std::string what = std::string(CollectiveName(a.coll)) + ": ";
  if (static_cast<int>(a.coll) > static_cast<int>(Collective::kBarrier))
    return InvalidArgument("unknown collective " + std::to_string(static_cast<int>(a.coll)));
  if (a.nranks < 1) return InvalidArgument(what + "nranks " + std::to_string(a.nranks) + " < 1");
  if (a.rank < 0 || a.rank >= a.nranks)
    return InvalidArgument(what + "rank " + std::to_string(a.rank) + " outside 0.." + std::to_string(a.nranks - 1));
  if (IsRooted(a.coll) && (a.root < 0 || a.root >= a.nranks))
    return InvalidArgument(what + "root " + std::to_string(a.root) + " outside 0.." + std::to_string(a.nranks - 1));
  if (a.nchannels < 1) return InvalidArgument(what + "nchannels " + std::to_string(a.nchannels) + " < 1");
  // Leave headroom for algorithms that address up to 2 * n * count elements of scratch.
  if (a.count > (UINT64_MAX / 4) / static_cast<uint64_t>(a.nranks))
    return InvalidArgument(what + "count " + std::to_string(a.count) + " too large for " +
                           std::to_string(a.nranks) + " ranks");
  return OkStatus();
}

}  // namespace tutti::algo
