#include "bench/perf/perf_coll.h"

#include <limits>

namespace tutti::perf {
namespace {

struct CollInfo {
  const char* name;
  const char* alias;  // without the underscore
  bool reduces, rooted;
};
constexpr CollInfo kColls[kNumColls] = {
    {"all_reduce", "allreduce", true, false},   {"all_gather", "allgather", false, false},
    {"reduce_scatter", "reducescatter", true, false}, {"broadcast", "bcast", false, true},
    {"reduce", "reduce", true, true},           {"scatter", "scatter", false, true},
    {"gather", "gather", false, true},          {"all_to_all", "alltoall", false, false},
    {"send_recv", "sendrecv", false, false},
};

}  // namespace

const char* CollName(Coll c) {
  int i = static_cast<int>(c);
  return i < kNumColls ? kColls[i].name : "unknown";
}

bool ParseColl(const std::string& name, Coll* out) {
  for (int i = 0; i < kNumColls; ++i) {
    if (name == kColls[i].name || name == kColls[i].alias) {
      *out = static_cast<Coll>(i);
      return true;
    }
  }
  return false;
}

bool CollReduces(Coll c) { return kColls[static_cast<int>(c)].reduces; }
bool CollRooted(Coll c) { return kColls[static_cast<int>(c)].rooted; }
bool CollHasInPlace(Coll c) { return c != Coll::kSendRecv; }

double BusBwFactor(Coll c, int nranks) {
  const double n = nranks;
  switch (c) {
    case Coll::kAllReduce: return 2 * (n - 1) / n;
    case Coll::kReduceScatter:
    case Coll::kAllGather:
    case Coll::kAllToAll:
    case Coll::kGather:
    case Coll::kScatter: return (n - 1) / n;
    case Coll::kBroadcast:
    case Coll::kReduce:
    case Coll::kSendRecv: return 1;
  }
  return 1;
}

Plan PlanFor(Coll c, size_t bytes, size_t elem, int nranks, int rank) {
  const size_t n = static_cast<size_t>(nranks);
  const size_t r = static_cast<size_t>(rank);
  Plan p;
  switch (c) {
    case Coll::kAllReduce:
    case Coll::kBroadcast:
    case Coll::kReduce:
    case Coll::kSendRecv:
      p.count = bytes / elem;
      p.send_elems = p.recv_elems = p.count;
      p.op_bytes = p.count * elem;
      break;
    case Coll::kAllGather:
    case Coll::kGather:
      p.count = bytes / (elem * n);
      p.send_elems = p.count;
      p.recv_elems = n * p.count;
      p.inplace_send_off = r * p.count;
      p.op_bytes = n * p.count * elem;
      break;
    case Coll::kReduceScatter:
    case Coll::kScatter:
      p.count = bytes / (elem * n);
      p.send_elems = n * p.count;
      p.recv_elems = p.count;
      p.inplace_recv_off = r * p.count;
      p.op_bytes = n * p.count * elem;
      break;
    case Coll::kAllToAll:
      p.count = bytes / (elem * n);
      p.send_elems = p.recv_elems = n * p.count;
      p.op_bytes = n * p.count * elem;
      break;
  }
  return p;
}

std::vector<size_t> SizeSweep(size_t min_bytes, size_t max_bytes, uint64_t factor, size_t step) {
  std::vector<size_t> sizes;
  if (factor <= 1 && step == 0) return sizes;
  constexpr size_t kMax = std::numeric_limits<size_t>::max();
  for (size_t s = min_bytes; s <= max_bytes;) {
    sizes.push_back(s);
    size_t next;
    if (factor > 1) {
      if (s == 0) {
        next = 1;
      } else if (s > kMax / factor) {
        break;
      } else {
        next = s * factor;
      }
    } else {
      if (s > kMax - step) break;
      next = s + step;
    }
    s = next;
  }
  return sizes;
}

}  // namespace tutti::perf
