#include "kernels/prims/report.h"

#include <cstdint>
#include <cstdio>

namespace tutti::prims {
namespace {

Status CheckProgram(const algo::PrimProgram& p, int rank, int nranks) {
  const std::string who = "rank " + std::to_string(rank) + "'s program: ";
  for (size_t si = 0; si < p.streams.size(); ++si) {
    const algo::PrimStream& ps = p.streams[si];
    if (uint64_t{ps.first_step} + ps.nsteps > p.steps.size()) {
      return InvalidArgument(who + "stream " + std::to_string(si) + " runs past the steps");
    }
    for (uint32_t k = 0; k < ps.nsteps; ++k) {
      const algo::PrimStep& step = p.steps[ps.first_step + k];
      const std::string at = who + "stream " + std::to_string(si) + " step " + std::to_string(k);
      if (step.nops > static_cast<uint32_t>(algo::kPrimMaxOpsPerStep) ||
          uint64_t{step.first_op} + step.nops > p.ops.size()) {
        return InvalidArgument(at + ": " + std::to_string(step.nops) + " ops out of range");
      }
      for (uint32_t i = 0; i < step.nops; ++i) {
        const algo::PrimOp& op = p.ops[step.first_op + i];
        const std::string bad = at + " op " + std::to_string(i) + ": ";
        auto peer_ok = [&](int32_t q) { return q >= -1 && q < nranks; };
        if (!peer_ok(op.recv_peer) || !peer_ok(op.send_peer)) return InvalidArgument(bad + "a peer outside the world");
        if (op.nsrcs < 1 || op.nsrcs > algo::kPrimMaxSrcs || op.ndsts > algo::kPrimMaxDsts) {
          return InvalidArgument(bad + std::to_string(op.nsrcs) + " sources, " + std::to_string(op.ndsts) +
                                 " destinations");
        }
        for (int j = 0; j < op.nsrcs; ++j) {
          const uint8_t b = op.srcs[j].buf;
          if (b == algo::kPrimRecv ? op.recv_peer < 0 : b > 2) return InvalidArgument(bad + "a source that does not exist");
        }
        for (int j = 0; j < op.ndsts; ++j) {
          if (op.dsts[j].buf > 2) return InvalidArgument(bad + "a destination that does not exist");
        }
        if (op.after >= 0) {
          // What the executor runs ahead: a pure send, the first to its peer in its step, after an
          // op of the previous step.
          bool first = true;
          for (uint32_t j = 0; j < i; ++j) first = first && p.ops[step.first_op + j].send_peer != op.send_peer;
          if (k == 0 || op.send_peer < 0 || op.recv_peer >= 0 || op.ndsts != 0 || !first ||
              static_cast<uint32_t>(op.after) >= p.steps[ps.first_step + k - 1].nops) {
            return InvalidArgument(bad + "an early send that is not a pure first send after an op of the previous step");
          }
        }
      }
    }
  }
  return OkStatus();
}

}  // namespace

Status CheckWorld(const std::vector<algo::PrimProgram>& programs, size_t nbuffers, const FifoGeom& g) {
  if (programs.size() != nbuffers || programs.empty()) {
    return InvalidArgument(std::to_string(programs.size()) + " programs for " + std::to_string(nbuffers) +
                           " ranks' buffers");
  }
  const uint32_t min_bytes = g.proto == Proto::kLL ? 32 : 16;  // room for one element of any type
  if (g.nslots == 0 || g.slot_bytes < min_bytes || g.slot_bytes % 16 != 0) {
    return InvalidArgument("FIFO geometry: " + std::to_string(g.nslots) + " slots of " + std::to_string(g.slot_bytes) +
                           " bytes (need >= 1 slot, a multiple of 16 bytes, at least " + std::to_string(min_bytes) +
                           ")");
  }
  for (size_t r = 0; r < programs.size(); ++r) {
    if (Status st = CheckProgram(programs[r], static_cast<int>(r), static_cast<int>(programs.size())); !st.ok()) {
      return st;
    }
  }
  return OkStatus();
}

Status CheckRegions(const std::vector<algo::PrimProgram>& programs, const std::vector<std::array<uint64_t, 3>>& sizes,
                    uint32_t elem) {
  static const char* const kNames[3] = {"input", "output", "scratch"};
  for (size_t r = 0; r < programs.size() && r < sizes.size(); ++r) {
    const algo::PrimProgram& p = programs[r];
    for (size_t si = 0; si < p.streams.size(); ++si) {
      const algo::PrimStream& ps = p.streams[si];
      for (uint32_t k = 0; k < ps.nsteps; ++k) {
        const algo::PrimStep& step = p.steps[ps.first_step + k];
        for (uint32_t i = 0; i < step.nops; ++i) {
          const algo::PrimOp& op = p.ops[step.first_op + i];
          auto inside = [&](const algo::PrimLoc& l) -> Status {
            if (l.buf == algo::kPrimRecv || sizes[r][l.buf] == UINT64_MAX) return OkStatus();
            const uint64_t limit = sizes[r][l.buf] / elem;
            if (l.offset <= limit && op.count <= limit - l.offset) return OkStatus();
            return InvalidArgument("rank " + std::to_string(r) + "'s program: stream " + std::to_string(si) + " step " +
                                   std::to_string(k) + " op " + std::to_string(i) + " touches " + kNames[l.buf] + "[" +
                                   std::to_string(l.offset) + ", " + std::to_string(l.offset + op.count) +
                                   ") of a buffer of " + std::to_string(limit) + " elements");
          };
          for (int j = 0; j < op.nsrcs; ++j) {
            if (Status st = inside(op.srcs[j]); !st.ok()) return st;
          }
          for (int j = 0; j < op.ndsts; ++j) {
            if (Status st = inside(op.dsts[j]); !st.ok()) return st;
          }
        }
      }
    }
  }
  return OkStatus();
}

std::string Waiting(const algo::PrimProgram& p, uint32_t stream, const StreamState& st, uint64_t per) {
  const algo::PrimStream& ps = p.streams[stream];
  if (st.step >= ps.nsteps) return "done";
  const algo::PrimStep& step = p.steps[ps.first_step + st.step];
  std::string out;
  for (uint32_t i = 0; i < step.nops; ++i) {
    const algo::PrimOp& op = p.ops[step.first_op + i];
    const uint64_t total = Pieces(op, per);
    if (st.done[0][i] >= total) continue;
    if (!out.empty()) out += ", ";
    if (op.recv_peer >= 0) out += "receive from rank " + std::to_string(op.recv_peer);
    if (op.recv_peer >= 0 && op.send_peer >= 0) out += " and ";
    if (op.send_peer >= 0) out += "send to rank " + std::to_string(op.send_peer);
    if (op.recv_peer < 0 && op.send_peer < 0) out += "local op";
    out += " (piece " + std::to_string(st.done[0][i]) + " of " + std::to_string(total) + ")";
  }
  return out;
}

Status StreamFailure(const algo::PrimProgram& program, int rank, uint32_t stream, const StreamState& st,
                     uint64_t per, double timeout_s) {
  const std::string where =
      "rank " + std::to_string(rank) + " stream " + std::to_string(stream) + " step " + std::to_string(st.step);
  switch (st.error) {
    case kErrSizeMismatch:
      return MismatchError(where + ": a piece from rank " + std::to_string(st.error_peer) + " carries " +
                           std::to_string(st.error_detail) +
                           " bytes where another size was expected (the ranks' programs disagree)");
    case kErrCallMismatch: {
      char tags[64];
      snprintf(tags, sizeof tags, "its call tag %08x, this rank's %08x", static_cast<unsigned>(st.error_detail >> 32),
               static_cast<unsigned>(st.error_detail & 0xffffffffu));
      return MismatchError(where + ": a piece from rank " + std::to_string(st.error_peer) +
                           " belongs to another call (" + tags +
                           "): the ranks did not make the same collective calls in the same order (collective, "
                           "count, type, op, root and algorithm must agree)");
    }
    case kErrTimeout:
      return TimeoutError(where + ": no progress for " + std::to_string(timeout_s) + " s, waiting to " +
                          Waiting(program, stream, st, per));
    case kErrAborted:
      return AbortedError(where + ": stopped because another stream failed");
    case kErrCancelled:
      return AbortedError(where + ": stopped because the communicator failed while the call ran, waiting to " +
                          Waiting(program, stream, st, per));
    default:
      return InternalError(where + ": error " + std::to_string(st.error));
  }
}

}  // namespace tutti::prims
