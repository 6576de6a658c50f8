// The device primitives: one schedule stream of one rank, running a lowered program
// (algorithms/prim_program.h) over FIFO connections (fifo.h). Written once for the GPU (a thread
// block per stream, kernels/cuda/prims_kernel.cu) and the host (a thread, or a round-robin
// scheduler that checks the protocol deterministically, host_world.h).
//
// Poll() never blocks: it tries one piece of every op that may move (its connections' earlier
// ops in this step are finished, its slot has arrived / has credit, an early send's producer has
// written the piece), and reports whether anything moved. A step ends when all its ops have; the
// early sends of the next step move during it. Every member of the team calls Poll() with the
// same state; decisions are agreed through Team::All, state is written by the leader.
#pragma once

#include <cstdint>
#include <cstring>

#include "algorithms/prim_program.h"
#include "kernels/functors.h"
#include "kernels/host_device.h"
#include "kernels/prims/fifo.h"
#include "kernels/prims/team.h"

namespace tutti::prims {

// The lowered program, as plain pointers (host vectors, or copies in device memory).
struct ProgramView {
  const algo::PrimStream* streams = nullptr;
  const algo::PrimStep* steps = nullptr;
  const algo::PrimOp* ops = nullptr;
  uint32_t nstreams = 0;
};

// One rank's side of a call.
struct RankView {
  int rank = 0;
  int nranks = 1;
  uint8_t* bufs[3] = {nullptr, nullptr, nullptr};  // input, output, scratch (element 0 of each)
  ConnCtl* const* send = nullptr;  // [stream * nranks + peer]: this rank -> peer
  ConnCtl* const* recv = nullptr;  // [stream * nranks + peer]: peer -> this rank
  FifoGeom geom;
  uint8_t* stage = nullptr;  // LL staging, slot_bytes per stream (received half | sent half)
  // The call's tag (fifo.h), the same on every rank that makes the same call: every piece sent
  // carries it, and a piece that carries another fails the stream (kErrCallMismatch).
  uint32_t tag = 0;
};

enum PollResult : int { kPollError = -1, kPollIdle = 0, kPollMoved = 1, kPollDone = 2 };
enum StreamError : int32_t {
  kErrNone = 0,
  kErrSizeMismatch = 1,
  kErrTimeout = 2,
  kErrAborted = 3,
  kErrCallMismatch = 4,
  kErrCancelled = 5  // the run's owner stopped it (its communicator failed meanwhile)
};

struct StreamState {
  uint32_t step = 0;                               // current step within the stream
  uint64_t done[2][algo::kPrimMaxOpsPerStep] = {};  // pieces done: current step, next step
  int32_t error = kErrNone;
  int32_t error_peer = -1;
  // kErrSizeMismatch: bytes that arrived; kErrCallMismatch: the piece's tag << 32 | this rank's.
  uint64_t error_detail = 0;
};

TUTTI_HD TUTTI_INLINE uint64_t PieceElems(const FifoGeom& g, uint32_t elem_size) {
  return PieceCapacity(g) / elem_size;
}
TUTTI_HD TUTTI_INLINE uint64_t Pieces(const algo::PrimOp& op, uint64_t per) {
  return op.count == 0 ? 1 : (op.count + per - 1) / per;
}

// 16 bytes of elements, moved as one vector load / store on the device.
template <class S>
struct alignas(16) Pack16 {
  S e[16 / sizeof(S)];
};
template <class S>
TUTTI_HD TUTTI_INLINE void Load16(Pack16<S>* p, const uint8_t* src) {
#if defined(__CUDA_ARCH__)
  *reinterpret_cast<uint4*>(p) = *reinterpret_cast<const uint4*>(src);
#else
  std::memcpy(static_cast<void*>(p), src, 16);
#endif
}
template <class S>
TUTTI_HD TUTTI_INLINE void Store16(uint8_t* dst, const Pack16<S>& p) {
#if defined(__CUDA_ARCH__)
  *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(&p);
#else
  std::memcpy(dst, static_cast<const void*>(&p), 16);
#endif
}

template <class S, class Op>
class StreamExec {
 public:
  TUTTI_HD StreamExec(const ProgramView& prog, const RankView& rank, uint32_t stream, StreamState* state)
      : prog_(prog), rank_(rank), stream_(stream), st_(state), per_(PieceElems(rank.geom, sizeof(S))) {}

  template <class T>
  TUTTI_HD int Poll(const T& team) {
    const algo::PrimStream& ps = prog_.streams[stream_];
    if (st_->error != kErrNone) return kPollError;
    if (st_->step >= ps.nsteps) return team.All(Drained()) ? kPollDone : kPollIdle;
    const algo::PrimStep& cur = prog_.steps[ps.first_step + st_->step];
    bool moved = false;
    for (uint32_t i = 0; i < cur.nops; ++i) {
      const algo::PrimOp& op = prog_.ops[cur.first_op + i];
      if (st_->done[0][i] >= Pieces(op, per_) || !InOrder(cur, i, op)) continue;
      const int r = TryPiece(team, op, st_->done[0][i]);
      if (r < 0) return kPollError;
      if (r > 0) {
        if (team.leader()) ++st_->done[0][i];
        team.Sync();
        moved = true;
      }
    }
    bool finished = true;
    for (uint32_t i = 0; i < cur.nops; ++i) {
      if (st_->done[0][i] < Pieces(prog_.ops[cur.first_op + i], per_)) finished = false;
    }
    if (finished) {
      team.Sync();
      if (team.leader()) {
        ++st_->step;
        for (int i = 0; i < algo::kPrimMaxOpsPerStep; ++i) {
          st_->done[0][i] = st_->done[1][i];
          st_->done[1][i] = 0;
        }
      }
      team.Sync();
      return kPollMoved;  // the next call says kPollDone after the last step
    }
    if (st_->step + 1 < ps.nsteps) {
      const algo::PrimStep& next = prog_.steps[ps.first_step + st_->step + 1];
      for (uint32_t i = 0; i < next.nops; ++i) {
        const algo::PrimOp& op = prog_.ops[next.first_op + i];
        if (op.after < 0 || st_->done[1][i] >= Pieces(op, per_)) continue;
        if (st_->done[1][i] >= st_->done[0][op.after]) continue;  // the producer has not written it yet
        if (!SendsDone(cur, op.send_peer)) continue;
        const int r = TryPiece(team, op, st_->done[1][i]);
        if (r < 0) return kPollError;
        if (r > 0) {
          if (team.leader()) ++st_->done[1][i];
          team.Sync();
          moved = true;
        }
      }
    }
    return moved ? kPollMoved : kPollIdle;
  }

  // Marks the stream failed (a timeout, an abort), so that Poll reports it.
  template <class T>
  TUTTI_HD void Fail(const T& team, int32_t error) {
    team.Sync();
    if (team.leader() && st_->error == kErrNone) st_->error = error;
    team.Sync();
  }

 private:
  // Earlier ops of this step on the same connection have finished.
  TUTTI_HD bool InOrder(const algo::PrimStep& step, uint32_t i, const algo::PrimOp& op) const {
    for (uint32_t j = 0; j < i; ++j) {
      const algo::PrimOp& o = prog_.ops[step.first_op + j];
      const bool same = (op.recv_peer >= 0 && o.recv_peer == op.recv_peer) ||
                        (op.send_peer >= 0 && o.send_peer == op.send_peer);
      if (same && st_->done[0][j] < Pieces(o, per_)) return false;
    }
    return true;
  }

  TUTTI_HD bool SendsDone(const algo::PrimStep& step, int peer) const {
    for (uint32_t j = 0; j < step.nops; ++j) {
      const algo::PrimOp& o = prog_.ops[step.first_op + j];
      if (o.send_peer == peer && st_->done[0][j] < Pieces(o, per_)) return false;
    }
    return true;
  }

  // After the last step: every sender's last store into this rank's memory has landed, so this
  // rank may free that memory once its call returns. Only LL needs the wait: its receiver goes
  // by the words' flags, and the sender (or proxy) stores tail into this rank's memory after
  // them; a rank that returned at the flags and freed its memory had that store land in freed
  // memory (found by TSan with thread ranks). Simple's receiver waits for tail itself.
  TUTTI_HD bool Drained() const {
    if (rank_.geom.proto != Proto::kLL) return true;
    for (int p = 0; p < rank_.nranks; ++p) {
      ConnCtl* rc = RecvConn(p);
      if (rc != nullptr && LoadAcquire(&rc->tail) < LoadWord(&rc->head)) return false;
    }
    return true;
  }
  TUTTI_HD ConnCtl* SendConn(int peer) const { return rank_.send[stream_ * rank_.nranks + peer]; }
  TUTTI_HD ConnCtl* RecvConn(int peer) const { return rank_.recv[stream_ * rank_.nranks + peer]; }
  TUTTI_HD uint8_t* StageIn() const { return rank_.stage + static_cast<size_t>(stream_) * rank_.geom.slot_bytes; }
  TUTTI_HD uint8_t* StageOut() const { return StageIn() + rank_.geom.slot_bytes / 2; }

  // A piece from `peer` that does not belong to this op (kErrSizeMismatch, kErrCallMismatch):
  // fails the stream.
  template <class T>
  TUTTI_HD int Mismatch(const T& team, int32_t error, int peer, uint64_t detail) {
    if (team.leader()) {
      st_->error = error;
      st_->error_peer = peer;
      st_->error_detail = detail;
    }
    team.Sync();
    return -1;
  }

  // Checks a piece's size word: the call first (a piece of another call may have any size).
  template <class T>
  TUTTI_HD int CheckPiece(const T& team, int peer, uint32_t got_bytes, uint32_t got_tag, uint32_t bytes) {
    if (got_tag != rank_.tag) {
      return Mismatch(team, kErrCallMismatch, peer, static_cast<uint64_t>(got_tag) << 32 | rank_.tag);
    }
    if (got_bytes != bytes) return Mismatch(team, kErrSizeMismatch, peer, got_bytes);
    return 0;
  }

  // Moves piece j of op if it can: 1 moved, 0 not yet, -1 failed.
  template <class T>
  TUTTI_HD int TryPiece(const T& team, const algo::PrimOp& op, uint64_t j) {
    const FifoGeom& g = rank_.geom;
    const bool ll = g.proto == Proto::kLL;
    const uint64_t first = j * per_;
    const uint64_t n = op.count > first ? (op.count - first < per_ ? op.count - first : per_) : 0;
    const uint32_t bytes = static_cast<uint32_t>(n * sizeof(S));
    ConnCtl* rc = op.recv_peer >= 0 ? RecvConn(op.recv_peer) : nullptr;
    ConnCtl* sc = op.send_peer >= 0 ? SendConn(op.send_peer) : nullptr;
    const uint64_t rseq = rc ? LoadWord(&rc->head) : 0;  // own counters: only this stream writes them
    const uint64_t sseq = sc ? LoadWord(&sc->tail) : 0;
    bool ready = true;
    if (rc && ll) {
      uint32_t got = 0, tag = 0;
      if (!team.All(LLHeader(rc, g, rseq, &got, &tag))) return 0;
      LLHeader(rc, g, rseq, &got, &tag);  // every member sees it now (it stays until the credit)
      if (CheckPiece(team, op.recv_peer, got, tag, bytes) < 0) return -1;
      ready = LLArrivedPart(team, rc, g, rseq, bytes);
    } else if (rc) {
      // The piece's size word is checked as soon as it arrived, before any credit: ranks of
      // different calls that filled each other's FIFOs still see the mismatch.
      if (!team.All(SimpleArrived(rc, rseq))) return 0;
      const uint64_t w = SlotSizes(rc)[rseq % g.nslots];
      if (CheckPiece(team, op.recv_peer, SizeOf(w), TagOf(w), bytes) < 0) return -1;
    }
    if (sc && ready) ready = HasCredit(sc, g, sseq);
    if (!team.All(ready)) return 0;

    const uint8_t* srcs[algo::kPrimMaxSrcs] = {};
    if (rc && ll) {
      LLUnpackPart(team, rc, g, rseq, bytes, StageIn());
      team.Sync();
    }
    for (int s = 0; s < op.nsrcs; ++s) {
      const algo::PrimLoc& loc = op.srcs[s];
      if (loc.buf == algo::kPrimRecv) {
        srcs[s] = ll ? StageIn() : Slot(rc, g, rseq);
      } else {
        srcs[s] = rank_.bufs[loc.buf] + (loc.offset + first) * sizeof(S);
      }
    }
    uint8_t* outs[algo::kPrimMaxDsts + 1] = {};
    int nouts = 0;
    for (int d = 0; d < op.ndsts; ++d) {
      outs[nouts++] = rank_.bufs[op.dsts[d].buf] + (op.dsts[d].offset + first) * sizeof(S);
    }
    if (sc) outs[nouts++] = ll ? StageOut() : Slot(sc, g, sseq);
    Combine(team, op, srcs, outs, nouts, n);

    if (sc) {
      if (ll) {
        team.Sync();
        LLPackPart(team, sc, g, sseq, bytes, rank_.tag, StageOut());
        team.Sync();
        if (team.leader()) StoreRelease(&sc->tail, sseq + 1);  // for a proxy (the receiver goes by the flags)
      } else {
        team.FenceBeforePublish();
        if (team.leader()) {
          SlotSizes(sc)[sseq % g.nslots] = SizeWord(bytes, rank_.tag);
          StoreRelease(&sc->tail, sseq + 1);
        }
      }
    }
    if (rc) {
      team.Sync();  // every member has read the slot
      if (team.leader()) StoreRelease(&rc->head, rseq + 1);
    }
    team.Sync();
    return 1;
  }

  // outs[o][e] = srcs[0][e] op srcs[1][e] op ... for e < n (widened, combined left to right,
  // narrowed once, as the CPU kernels do), or a copy of srcs[0]. 16 bytes per member at a time
  // where every pointer is 16-byte aligned (slots always are, staging when slot_bytes is a multiple
  // of 32), the rest one element at a time.
  template <class T>
  TUTTI_HD void Combine(const T& team, const algo::PrimOp& op, const uint8_t* const* srcs, uint8_t* const* outs,
                        int nouts, uint64_t n) const {
    constexpr int V = static_cast<int>(16 / sizeof(S));
    bool aligned = true;
    for (int s = 0; s < op.nsrcs; ++s) aligned = aligned && reinterpret_cast<uintptr_t>(srcs[s]) % 16 == 0;
    for (int o = 0; o < nouts; ++o) aligned = aligned && reinterpret_cast<uintptr_t>(outs[o]) % 16 == 0;
    const uint64_t nvec = aligned ? n / V : 0;
    for (uint64_t v = team.tid(); v < nvec; v += team.size()) {
      Pack16<S> p;
      Load16(&p, srcs[0] + v * 16);
      if (op.reduce && op.nsrcs > 1) {
        kernels::Accum<S> acc[V];
        for (int j = 0; j < V; ++j) acc[j] = kernels::Widen<S>(p.e[j]);
        for (int s = 1; s < op.nsrcs; ++s) {
          Load16(&p, srcs[s] + v * 16);
          for (int j = 0; j < V; ++j) acc[j] = Op::Apply(acc[j], kernels::Widen<S>(p.e[j]));
        }
        for (int j = 0; j < V; ++j) p.e[j] = kernels::Narrow<S>(acc[j]);
      }
      for (int o = 0; o < nouts; ++o) Store16(outs[o] + v * 16, p);
    }
    const S* const* in = reinterpret_cast<const S* const*>(srcs);
    for (uint64_t e = nvec * V + team.tid(); e < n; e += team.size()) {
      S v;
      if (op.reduce && op.nsrcs > 1) {
        kernels::Accum<S> acc = kernels::Widen<S>(in[0][e]);
        for (int s = 1; s < op.nsrcs; ++s) acc = Op::Apply(acc, kernels::Widen<S>(in[s][e]));
        v = kernels::Narrow<S>(acc);
      } else {
        v = in[0][e];
      }
      for (int o = 0; o < nouts; ++o) reinterpret_cast<S*>(outs[o])[e] = v;
    }
  }

  ProgramView prog_;
  RankView rank_;
  uint32_t stream_;
  StreamState* st_;
  uint64_t per_;
};

}  // namespace tutti::prims
