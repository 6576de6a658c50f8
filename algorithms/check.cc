#include "algorithms/check.h"

#include <algorithm>
#include <vector>

namespace tutti::algo {
namespace {

// Where regions live: with Aliasing::kInPlace, input and output are one storage (space 0, at
// InPlaceBase); scratch is always its own.
struct Layout {
  bool in_place = false;
  uint64_t base[2] = {0, 0};  // input, output
  int Space(const Region& r) const { return in_place && r.buf != Buf::kScratch ? 0 : static_cast<int>(r.buf); }
  uint64_t Lo(const Region& r) const { return r.offset + (in_place && r.buf != Buf::kScratch ? base[static_cast<int>(r.buf)] : 0); }
  bool Overlap(const Region& x, const Region& y) const {
    return Space(x) == Space(y) && x.count > 0 && y.count > 0 && Lo(x) < Lo(y) + y.count && Lo(y) < Lo(x) + x.count;
  }
  bool Same(const Region& x, const Region& y) const {
    return Space(x) == Space(y) && Lo(x) == Lo(y) && x.count == y.count;
  }
};

// The largest `end` seen per stream, for the two streams with the largest ends.
struct Top2 {
  uint64_t end1 = 0, end2 = 0;
  int s1 = -1, s2 = -1;
  void Add(uint64_t end, int s) {
    if (s == s1) {
      end1 = std::max(end1, end);
    } else if (s == s2) {
      end2 = std::max(end2, end);
    } else if (end > end2) {
      end2 = end;
      s2 = s;
    }
    if (end2 > end1) {
      std::swap(end1, end2);
      std::swap(s1, s2);
    }
  }
  // Largest end among streams other than t, and which stream.
  std::pair<uint64_t, int> Other(int t) const { return s1 != t ? std::pair{end1, s1} : std::pair{end2, s2}; }
};

struct Access {
  uint64_t lo, hi;
  int stream;
  bool write;
  size_t step;
};

}  // namespace

std::string DescribeRegion(const Region& r) {
  return std::string(BufName(r.buf)) + "[" + std::to_string(r.offset) + ", +" + std::to_string(r.count) + ")";
}

Status CheckSchedule(const Schedule& s, const CollArgs& a, Aliasing aliasing) {
  Layout lay;
  lay.in_place = aliasing == Aliasing::kInPlace;
  lay.base[0] = InPlaceBase(a, Buf::kInput);
  lay.base[1] = InPlaceBase(a, Buf::kOutput);
  const std::string who = "rank " + std::to_string(a.rank) + (lay.in_place ? " (in place)" : "");
  if (s.streams.size() > kMaxScheduleStreams)
    return InternalError(who + ": " + std::to_string(s.streams.size()) + " streams (at most " +
                         std::to_string(kMaxScheduleStreams) + ")");
  std::vector<Access> acc[3];
  for (size_t si = 0; si < s.streams.size(); ++si) {
    const auto& steps = s.streams[si].steps;
    for (size_t k = 0; k < steps.size(); ++k) {
      const Step& step = steps[k];
      const std::string at = who + " stream " + std::to_string(si) + " step " + std::to_string(k) + ": ";
      auto in_bounds = [&](const Region& r, bool write) -> Status {
        const uint64_t size = r.buf == Buf::kScratch ? s.scratch_count : BufferCount(a, r.buf);
        if (static_cast<int>(r.buf) > 2) return InternalError(at + "unknown buffer");
        if (r.offset > size || r.count > size - r.offset)
          return InternalError(at + DescribeRegion(r) + " outside the " + BufName(r.buf) + " of " +
                               std::to_string(size) + " elements");
        if (write && r.buf == Buf::kInput) return InternalError(at + "writes " + DescribeRegion(r));
        return OkStatus();
      };
      auto note = [&](const Region& r, bool write) {
        if (r.count > 0) acc[lay.Space(r)].push_back({lay.Lo(r), lay.Lo(r) + r.count, static_cast<int>(si), write, k});
      };
      for (const auto* list : {&step.recvs, &step.sends})
        for (const Transfer& t : *list) {
          if (t.peer < 0 || t.peer >= a.nranks || t.peer == a.rank)
            return InternalError(at + "transfer with peer " + std::to_string(t.peer));
          TUTTI_RETURN_IF_ERROR(in_bounds(t.region, list == &step.recvs));
          note(t.region, list == &step.recvs);
        }
      for (size_t i = 0; i < step.recvs.size(); ++i) {
        const Region& x = step.recvs[i].region;
        for (size_t j = 0; j < step.recvs.size(); ++j)
          if (j != i && lay.Overlap(x, step.recvs[j].region))
            return InternalError(at + "receives overlap: " + DescribeRegion(x) + " and " + DescribeRegion(step.recvs[j].region));
        for (const Transfer& t : step.sends)
          if (lay.Overlap(x, t.region))
            return InternalError(at + "receive " + DescribeRegion(x) + " overlaps send " + DescribeRegion(t.region));
      }
      for (const LocalOp& l : step.locals) {
        TUTTI_RETURN_IF_ERROR(in_bounds(l.dst, true));
        if (l.srcs.empty() || (l.kind == LocalOp::Kind::kCopy && l.srcs.size() != 1))
          return InternalError(at + "local op with " + std::to_string(l.srcs.size()) + " sources");
        for (const Region& r : l.srcs) {
          TUTTI_RETURN_IF_ERROR(in_bounds(r, false));
          if (r.count != l.dst.count)
            return InternalError(at + "local op source " + DescribeRegion(r) + " and destination " +
                                 DescribeRegion(l.dst) + " differ in count");
          if (!lay.Same(r, l.dst) && lay.Overlap(r, l.dst))
            return InternalError(at + "local op source " + DescribeRegion(r) + " partly overlaps destination " +
                                 DescribeRegion(l.dst));
          note(r, false);
        }
        // A copy onto itself (in place: an input region onto the output region that is the same
        // storage) changes nothing; it is no write.
        note(l.dst, !(l.kind == LocalOp::Kind::kCopy && lay.Same(l.srcs[0], l.dst)));
      }
    }
  }
  for (int b = 0; b < 3; ++b) {
    auto& v = acc[b];
    std::sort(v.begin(), v.end(), [](const Access& x, const Access& y) { return x.lo < y.lo; });
    Top2 any, writes;
    for (const Access& x : v) {
      auto [wend, ws] = writes.Other(x.stream);
      auto [aend, as] = any.Other(x.stream);
      int other = wend > x.lo ? ws : (x.write && aend > x.lo ? as : -1);
      if (other >= 0)
        return InternalError(who + ": streams " + std::to_string(other) + " and " + std::to_string(x.stream) +
                             " both access " + (lay.in_place && b == 0 ? std::string("input/output storage") : BufName(static_cast<Buf>(b))) + " near element " +
                             std::to_string(x.lo) + " and one of them writes it (stream " +
                             std::to_string(x.stream) + " step " + std::to_string(x.step) + ")");
      any.Add(x.hi, x.stream);
      if (x.write) writes.Add(x.hi, x.stream);
    }
  }
  return OkStatus();
}

}  // namespace tutti::algo
