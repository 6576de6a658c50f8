#include "kernels/prims/host_world.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>

#include "kernels/functors.h"
#include "kernels/prims/report.h"
#include "kernels/prims/stream_exec.h"

namespace tutti::prims {
namespace {

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

// Every connection of the world, and each rank's tables of them.
class Wiring {
 public:
  Wiring(int nranks, uint32_t nstreams, const FifoGeom& g, uint64_t base) : n_(nranks), nstreams_(nstreams) {
    const size_t bytes = (ConnBytes(g) + 63) / 64 * 64;
    const size_t conns = static_cast<size_t>(nstreams) * n_ * n_;
    mem_.reset(static_cast<uint8_t*>(std::aligned_alloc(64, std::max<size_t>(64, bytes * conns))));
    std::memset(mem_.get(), 0, bytes * conns);
    send_.resize(conns);
    recv_.resize(conns);
    stage_.resize(static_cast<size_t>(n_));
    for (uint32_t s = 0; s < nstreams; ++s) {
      for (int from = 0; from < n_; ++from) {
        for (int to = 0; to < n_; ++to) {
          auto* c = reinterpret_cast<ConnCtl*>(mem_.get() + bytes * ((s * n_ + from) * static_cast<size_t>(n_) + to));
          c->tail = base;
          c->head = base;
          send_[(from * static_cast<size_t>(nstreams) + s) * n_ + to] = c;
          recv_[(to * static_cast<size_t>(nstreams) + s) * n_ + from] = c;
        }
      }
    }
    for (int r = 0; r < n_; ++r) {
      stage_[r].reset(static_cast<uint8_t*>(std::aligned_alloc(64, std::max<size_t>(64, size_t{g.slot_bytes} * nstreams))));
    }
  }
  ConnCtl* const* Send(int rank) const { return &send_[static_cast<size_t>(rank) * nstreams_ * n_]; }
  ConnCtl* const* Recv(int rank) const { return &recv_[static_cast<size_t>(rank) * nstreams_ * n_]; }
  uint8_t* Stage(int rank) const { return stage_[rank].get(); }

 private:
  int n_;
  uint32_t nstreams_;
  std::unique_ptr<uint8_t, FreeDeleter> mem_;
  std::vector<ConnCtl*> send_, recv_;
  std::vector<std::unique_ptr<uint8_t, FreeDeleter>> stage_;
};

ProgramView ViewOf(const algo::PrimProgram& p) {
  return ProgramView{p.streams.data(), p.steps.data(), p.ops.data(), static_cast<uint32_t>(p.streams.size())};
}

std::string Where(int rank, uint32_t stream, const StreamState& st) {
  return "rank " + std::to_string(rank) + " stream " + std::to_string(stream) + " step " + std::to_string(st.step);
}

struct Runner {
  int rank;
  uint32_t stream;
  const algo::PrimProgram* program;
  RankView view;
  StreamState state;
};

template <class S, class Op>
Status RunTyped(const std::vector<algo::PrimProgram>& programs, const std::vector<HostRankBuffers>& buffers,
                const HostWorldOptions& o) {
  const int n = static_cast<int>(programs.size());
  uint32_t nstreams = 0;
  for (const auto& p : programs) nstreams = std::max(nstreams, static_cast<uint32_t>(p.streams.size()));
  Wiring wiring(n, std::max<uint32_t>(nstreams, 1), o.geom, o.counter_base);
  const uint64_t per = PieceElems(o.geom, sizeof(S));
  std::vector<std::unique_ptr<Runner>> runners;
  for (int r = 0; r < n; ++r) {
    RankView v;
    v.rank = r;
    v.nranks = n;
    v.bufs[0] = static_cast<uint8_t*>(buffers[r].input);
    v.bufs[1] = static_cast<uint8_t*>(buffers[r].output);
    v.bufs[2] = static_cast<uint8_t*>(buffers[r].scratch);
    v.send = wiring.Send(r);
    v.recv = wiring.Recv(r);
    v.geom = o.geom;
    v.stage = wiring.Stage(r);
    for (uint32_t s = 0; s < programs[r].streams.size(); ++s) {
      runners.push_back(std::make_unique<Runner>(Runner{r, s, &programs[r], v, StreamState{}}));
    }
  }
  const Team team;
  if (o.mode == HostWorldOptions::Mode::kRoundRobin) {
    for (;;) {
      bool moved = false, all_done = true;
      for (auto& ru : runners) {
        StreamExec<S, Op> exec(ViewOf(*ru->program), ru->view, ru->stream, &ru->state);
        const int res = exec.Poll(team);
        if (res == kPollError) return StreamFailure(*ru->program, ru->rank, ru->stream, ru->state, per, 0);
        if (res != kPollDone) all_done = false;
        if (res == kPollMoved) moved = true;
      }
      if (all_done) return OkStatus();
      if (!moved) {
        std::string msg = "deadlock: no stream can move;";
        for (auto& ru : runners) {
          if (ru->state.step >= ru->program->streams[ru->stream].nsteps) continue;
          msg += " " + Where(ru->rank, ru->stream, ru->state) + " waits to " +
                 Waiting(*ru->program, ru->stream, ru->state, per) + ";";
        }
        return InternalError(msg);
      }
    }
  }
  std::atomic<bool> failed{false};
  std::vector<std::thread> threads;
  for (auto& ru : runners) {
    threads.emplace_back([&, r = ru.get()] {
      StreamExec<S, Op> exec(ViewOf(*r->program), r->view, r->stream, &r->state);
      using Clock = std::chrono::steady_clock;
      auto last_move = Clock::now();
      int idle = 0;
      for (;;) {
        const int res = exec.Poll(team);
        if (res == kPollDone) return;
        if (res == kPollError) {
          failed.store(true);
          return;
        }
        if (res == kPollMoved) {
          idle = 0;
          last_move = Clock::now();
          if (o.after_move) o.after_move(r->rank, static_cast<int>(r->stream));
          continue;
        }
        if (++idle < 64) continue;
        std::this_thread::yield();
        if ((idle & 255) != 0) continue;
        if (failed.load()) {
          exec.Fail(team, kErrAborted);
          return;
        }
        if (std::chrono::duration<double>(Clock::now() - last_move).count() > o.timeout_s) {
          exec.Fail(team, kErrTimeout);
          failed.store(true);
          return;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  return FirstFailure(
      runners.size(),
      [&](size_t i, const algo::PrimProgram** p, int* rank, uint32_t* stream) {
        *p = runners[i]->program;
        *rank = runners[i]->rank;
        *stream = runners[i]->stream;
        return &runners[i]->state;
      },
      per, o.timeout_s);
}

}  // namespace

Status RunHostWorld(DataType type, RedOp op, const std::vector<algo::PrimProgram>& programs,
                    const std::vector<HostRankBuffers>& buffers, const HostWorldOptions& options) {
  if (Status st = CheckWorld(programs, buffers.size(), options.geom); !st.ok()) {
    return st.WithContext("RunHostWorld");
  }
  const Status bad_type = InvalidArgument(std::string("RunHostWorld: ") + RedOpName(op) + " on " + DataTypeName(type));
  return kernels::DispatchType(
      type,
      [&](auto tag) -> Status {
        using S = typename decltype(tag)::type;
        return kernels::DispatchOp<kernels::Accum<S>>(
            op, [&](auto optag) -> Status { return RunTyped<S, typename decltype(optag)::type>(programs, buffers, options); },
            [&] { return bad_type; });
      },
      [&] { return bad_type; });
}

}  // namespace tutti::prims
