#include "algorithms/lowering.h"

#include <string>
#include <vector>

namespace tutti::algo {
namespace {

using OpList = std::vector<PrimOp>;     // one step
using StepList = std::vector<OpList>;   // one stream

struct Reg {
  uint8_t buf;
  uint64_t offset;
  uint64_t count;
};

bool Overlap(const Reg& a, const Reg& b) {
  return a.buf == b.buf && a.count > 0 && b.count > 0 && a.offset < b.offset + b.count &&
         b.offset < a.offset + a.count;
}
bool Same(const Reg& a, const Reg& b) { return a.buf == b.buf && a.offset == b.offset && a.count == b.count; }
bool Covers(const Reg& outer, const Reg& inner) {
  return outer.buf == inner.buf && outer.offset <= inner.offset &&
         inner.offset + inner.count <= outer.offset + outer.count;
}

Reg At(const PrimLoc& l, uint64_t count) { return Reg{l.buf, l.offset, count}; }
PrimLoc Loc(const Region& r) { return PrimLoc{static_cast<uint8_t>(r.buf), r.offset}; }

bool ReadsOverlap(const PrimOp& op, const Reg& r) {
  for (int i = 0; i < op.nsrcs; ++i) {
    if (op.srcs[i].buf != kPrimRecv && Overlap(At(op.srcs[i], op.count), r)) return true;
  }
  return false;
}
bool WritesOverlap(const PrimOp& op, const Reg& r) {
  for (int i = 0; i < op.ndsts; ++i) {
    if (Overlap(At(op.dsts[i], op.count), r)) return true;
  }
  return false;
}
bool IsPureRecv(const PrimOp& op) {
  return op.recv_peer >= 0 && op.send_peer < 0 && op.nsrcs == 1 && op.srcs[0].buf == kPrimRecv &&
         op.ndsts == 1;
}
bool IsPureSend(const PrimOp& op) {
  return op.send_peer >= 0 && op.recv_peer < 0 && op.nsrcs == 1 && op.srcs[0].buf != kPrimRecv &&
         op.ndsts == 0 && op.after < 0;
}
bool IsLocal(const PrimOp& op) { return op.recv_peer < 0 && op.send_peer < 0; }

Status Unfused(const Schedule& s, std::vector<StepList>* out) {
  out->assign(s.streams.size(), {});
  for (size_t si = 0; si < s.streams.size(); ++si) {
    for (size_t k = 0; k < s.streams[si].steps.size(); ++k) {
      const Step& step = s.streams[si].steps[k];
      const size_t transfers = step.recvs.size() + step.sends.size();
      if (transfers > static_cast<size_t>(kPrimMaxOpsPerStep)) {
        return InvalidArgument("stream " + std::to_string(si) + " step " + std::to_string(k) + " has " +
                          std::to_string(transfers) + " transfers; a lowered step holds at most " +
                          std::to_string(kPrimMaxOpsPerStep));
      }
      if (transfers > 0) {
        OpList ops;
        for (const Transfer& t : step.recvs) {
          PrimOp op;
          op.count = t.region.count;
          op.recv_peer = t.peer;
          op.nsrcs = 1;
          op.srcs[0].buf = kPrimRecv;
          op.ndsts = 1;
          op.dsts[0] = Loc(t.region);
          ops.push_back(op);
        }
        for (const Transfer& t : step.sends) {
          PrimOp op;
          op.count = t.region.count;
          op.send_peer = t.peer;
          op.nsrcs = 1;
          op.srcs[0] = Loc(t.region);
          ops.push_back(op);
        }
        (*out)[si].push_back(std::move(ops));
      }
      for (const LocalOp& l : step.locals) {
        if (l.srcs.empty() || l.srcs.size() > static_cast<size_t>(kPrimMaxSrcs)) {
          return InvalidArgument(  "stream " + std::to_string(si) + " step " + std::to_string(k) + ": a local op with " +
                            std::to_string(l.srcs.size()) + " sources (a lowered op takes 1 to " +
                            std::to_string(kPrimMaxSrcs) + ")");
        }
        PrimOp op;
        op.count = l.dst.count;
        op.reduce = l.kind == LocalOp::Kind::kReduce ? 1 : 0;
        op.nsrcs = static_cast<uint8_t>(l.srcs.size());
        for (size_t i = 0; i < l.srcs.size(); ++i) op.srcs[i] = Loc(l.srcs[i]);
        op.ndsts = 1;
        op.dsts[0] = Loc(l.dst);
        (*out)[si].push_back(OpList{op});
      }
    }
  }
  return OkStatus();
}

// Whether region r holds a value that a step after `from` (exclusive of nothing: steps
// [from, end)) reads before something overwrites all of it; output and input count as read at
// the end of the stream (they are the call's result), scratch does not.
bool LiveAfter(const StepList& steps, size_t from, const Reg& r) {
  for (size_t k = from; k < steps.size(); ++k) {
    for (const PrimOp& op : steps[k]) {
      if (ReadsOverlap(op, r)) return true;
    }
    for (const PrimOp& op : steps[k]) {
      for (int i = 0; i < op.ndsts; ++i) {
        if (Covers(At(op.dsts[i], op.count), r)) return false;
      }
    }
  }
  return r.buf != static_cast<uint8_t>(Buf::kScratch);
}

// Folds local op `l` (the only op of the step after `step`) into the pure receive of `step` it
// consumes; `later` is the index of the first step after l's.
bool FuseLocal(const StepList& stream, size_t later, OpList* step, const PrimOp& l) {
  const Reg ldst = At(l.dsts[0], l.count);
  for (size_t ri = 0; ri < step->size(); ++ri) {
    const PrimOp& r = (*step)[ri];
    if (!IsPureRecv(r) || r.count != l.count) continue;
    const Reg got = At(r.dsts[0], r.count);
    bool uses = false, partial = false;
    for (int i = 0; i < l.nsrcs; ++i) {
      const Reg src = At(l.srcs[i], l.count);
      if (Same(src, got)) {
        uses = true;
      } else if (Overlap(src, got)) {
        partial = true;
      }
    }
    if (!uses || partial || (Overlap(ldst, got) && !Same(ldst, got))) continue;
    bool clash = false;
    for (size_t oi = 0; oi < step->size() && !clash; ++oi) {
      if (oi == ri) continue;
      const PrimOp& o = (*step)[oi];
      if (ReadsOverlap(o, ldst) || WritesOverlap(o, ldst)) clash = true;
      for (int i = 0; i < l.nsrcs && !clash; ++i) {
        if (!Same(At(l.srcs[i], l.count), got) && WritesOverlap(o, At(l.srcs[i], l.count))) clash = true;
      }
    }
    if (clash) continue;
    PrimOp f;
    f.count = l.count;
    f.recv_peer = r.recv_peer;
    f.reduce = l.reduce;
    f.nsrcs = l.nsrcs;
    for (int i = 0; i < l.nsrcs; ++i) {
      f.srcs[i] = Same(At(l.srcs[i], l.count), got) ? PrimLoc{kPrimRecv, 0} : l.srcs[i];
    }
    f.ndsts = 1;
    f.dsts[0] = l.dsts[0];
    if (!Same(ldst, got) && LiveAfter(stream, later, got)) {
      f.ndsts = 2;
      f.dsts[1] = r.dsts[0];
    }
    (*step)[ri] = f;
    return true;
  }
  return false;
}

uint32_t FuseLocals(StepList* stream) {
  uint32_t fused = 0;
  size_t t = 0;
  while (t + 1 < stream->size()) {
    OpList& next = (*stream)[t + 1];
    if (next.size() == 1 && IsLocal(next[0])) {
      const PrimOp l = next[0];
      if (FuseLocal(*stream, t + 2, &(*stream)[t], l)) {
        stream->erase(stream->begin() + static_cast<long>(t) + 1);
        ++fused;
        continue;  // the step may consume another of its receives next
      }
    }
    ++t;
  }
  return fused;
}

uint32_t MarkEarlySends(StepList* stream) {
  uint32_t marked = 0;
  for (size_t k = 0; k + 1 < stream->size(); ++k) {
    const OpList& prev = (*stream)[k];
    OpList& cur = (*stream)[k + 1];
    for (size_t i = 0; i < cur.size(); ++i) {
      PrimOp& s = cur[i];
      if (!IsPureSend(s)) continue;
      bool first_to_peer = true;
      for (size_t j = 0; j < i; ++j) {
        if (cur[j].send_peer == s.send_peer) first_to_peer = false;
      }
      if (!first_to_peer) continue;
      const Reg src = At(s.srcs[0], s.count);
      int producer = -1, writers = 0;
      for (size_t p = 0; p < prev.size(); ++p) {
        if (!WritesOverlap(prev[p], src)) continue;
        ++writers;
        for (int d = 0; d < prev[p].ndsts; ++d) {
          if (prev[p].count == s.count && Same(At(prev[p].dsts[d], prev[p].count), src)) {
            producer = static_cast<int>(p);
          }
        }
      }
      if (writers == 1 && producer >= 0) {
        s.after = producer;
        ++marked;
      }
    }
  }
  return marked;
}

const char* LocName(const PrimLoc& l) {
  if (l.buf == kPrimRecv) return "recv";
  return BufName(static_cast<Buf>(l.buf));
}

}  // namespace

Result<PrimProgram> LowerSchedule(const Schedule& schedule, const LowerOptions& options) {
  std::vector<StepList> streams;
  if (Status st = Unfused(schedule, &streams); !st.ok()) return st;
  PrimProgram prog;
  prog.scratch_count = schedule.scratch_count;
  for (StepList& stream : streams) {
    if (options.fuse_locals) prog.fused_locals += FuseLocals(&stream);
    if (options.early_sends) prog.early_sends += MarkEarlySends(&stream);
    PrimStream ps;
    ps.first_step = static_cast<uint32_t>(prog.steps.size());
    ps.nsteps = static_cast<uint32_t>(stream.size());
    for (const OpList& ops : stream) {
      PrimStep step;
      step.first_op = static_cast<uint32_t>(prog.ops.size());
      step.nops = static_cast<uint32_t>(ops.size());
      prog.ops.insert(prog.ops.end(), ops.begin(), ops.end());
      prog.steps.push_back(step);
    }
    prog.streams.push_back(ps);
  }
  return prog;
}

std::string DescribeProgram(const PrimProgram& program) {
  std::string out;
  for (size_t si = 0; si < program.streams.size(); ++si) {
    const PrimStream& ps = program.streams[si];
    for (uint32_t k = 0; k < ps.nsteps; ++k) {
      const PrimStep& step = program.steps[ps.first_step + k];
      for (uint32_t i = 0; i < step.nops; ++i) {
        const PrimOp& op = program.ops[step.first_op + i];
        out += "s" + std::to_string(si) + " step " + std::to_string(k) + ": ";
        if (op.recv_peer >= 0) out += "recv<-" + std::to_string(op.recv_peer) + " ";
        out += "(";
        for (int j = 0; j < op.nsrcs; ++j) {
          if (j > 0) out += op.reduce ? " op " : " ";
          out += LocName(op.srcs[j]);
          if (op.srcs[j].buf != kPrimRecv) out += "+" + std::to_string(op.srcs[j].offset);
        }
        out += ")x" + std::to_string(op.count);
        for (int j = 0; j < op.ndsts; ++j) {
          out += std::string(j == 0 ? " -> " : ", ") + LocName(op.dsts[j]) + "+" + std::to_string(op.dsts[j].offset);
        }
        if (op.send_peer >= 0) out += ", send->" + std::to_string(op.send_peer);
        if (op.after >= 0) out += " after " + std::to_string(op.after);
        out += "\n";
      }
    }
  }
  return out;
}

}  // namespace tutti::algo
