#include "kernels/prims/host_world.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <map>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include <sys/socket.h>

#include "kernels/functors.h"
#include "kernels/prims/host_poll.h"
#include "kernels/prims/host_team.h"
#include "kernels/prims/proxy.h"
#include "kernels/prims/report.h"
#include "kernels/prims/stream_exec.h"

namespace tutti::prims {
namespace {

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

// Every connection of the world, each rank's tables of them, and the proxies joining the two
// copies of a connection between hosts.
class Wiring {
 public:
  Wiring(int nranks, uint32_t nstreams, const FifoGeom& g, uint64_t base, const std::vector<int>& hosts)
      : n_(nranks), nstreams_(nstreams) {
    const size_t bytes = (ConnBytes(g) + 63) / 64 * 64;
    const size_t conns = static_cast<size_t>(nstreams) * n_ * n_;
    // Two copies of each connection: the sender's, and the receiver's when on another host.
    mem_.reset(static_cast<uint8_t*>(std::aligned_alloc(64, std::max<size_t>(64, 2 * bytes * conns))));
    if (!mem_) {
      status_ = SystemError("connections of " + std::to_string(2 * bytes * conns) + " bytes", ENOMEM);
      return;
    }
    std::memset(mem_.get(), 0, 2 * bytes * conns);
    send_.resize(conns);
    recv_.resize(conns);
    stage_.resize(static_cast<size_t>(n_));
    auto host = [&](int r) { return hosts.empty() ? 0 : hosts[r]; };
    for (uint32_t s = 0; s < nstreams; ++s) {
      for (int from = 0; from < n_; ++from) {
        for (int to = 0; to < n_; ++to) {
          const size_t id = (s * n_ + from) * static_cast<size_t>(n_) + to;
          auto* c = reinterpret_cast<ConnCtl*>(mem_.get() + bytes * 2 * id);
          auto* far = reinterpret_cast<ConnCtl*>(mem_.get() + bytes * (2 * id + 1));
          c->tail = c->head = far->tail = far->head = base;
          const bool split = host(from) != host(to);
          conns_.push_back(Conn{s, from, to, c, split ? far : nullptr});
          send_[(from * static_cast<size_t>(nstreams) + s) * n_ + to] = c;
          recv_[(to * static_cast<size_t>(nstreams) + s) * n_ + from] = split ? far : c;
          if (split) {
            ProxyOf(host(from), host(to), g)->AddOutbound(static_cast<uint32_t>(id), c);
            ProxyOf(host(to), host(from), g)->AddInbound(static_cast<uint32_t>(id), far);
          }
        }
      }
    }
    const size_t stage_bytes = (size_t{g.slot_bytes} * nstreams + 63) / 64 * 64;
    for (int r = 0; r < n_; ++r) {
      stage_[r].reset(static_cast<uint8_t*>(std::aligned_alloc(64, stage_bytes)));
      if (!stage_[r] && status_.ok()) status_ = SystemError("LL staging", ENOMEM);
    }
  }

  // After every stream ended: every piece sent was received (a send whose receiver expected
  // nothing, or less, completes as soon as it fits the FIFO, so only this finds it). Proxies are
  // polled until nothing moves first, so that what is on its way arrives.
  Status CheckDrained() {
    for (int idle = 0; idle < 3;) {
      bool moved = false;
      for (const auto& p : proxies_) {
        bool m = false;
        if (Status st = p->Poll(&m); !st.ok()) return st;
        moved = moved || m;
      }
      idle = moved ? 0 : idle + 1;
    }
    for (const Conn& k : conns_) {
      const uint64_t sent = LoadAcquire(&k.send->tail);
      const uint64_t got = LoadAcquire(k.far ? &k.far->head : &k.send->head);
      if (sent != got) {
        return MismatchError("rank " + std::to_string(k.from) + " sent " + std::to_string(sent - got) +
                             " more piece(s) to rank " + std::to_string(k.to) + " on stream " + std::to_string(k.stream) +
                             " than rank " + std::to_string(k.to) + " received (the ranks' programs disagree)");
      }
    }
    return OkStatus();
  }
  ConnCtl* const* Send(int rank) const { return &send_[static_cast<size_t>(rank) * nstreams_ * n_]; }
  ConnCtl* const* Recv(int rank) const { return &recv_[static_cast<size_t>(rank) * nstreams_ * n_]; }
  uint8_t* Stage(int rank) const { return stage_[rank].get(); }
  const std::vector<std::unique_ptr<FifoProxy>>& proxies() const { return proxies_; }
  const Status& status() const { return status_; }

 private:
  // The proxy on host `at` for its link to host `other` (both ends made on first use).
  FifoProxy* ProxyOf(int at, int other, const FifoGeom& g) {
    const auto key = std::make_pair(at, other);
    auto it = proxy_index_.find(key);
    if (it != proxy_index_.end()) return proxies_[it->second].get();
    int fds[2] = {-1, -1};
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0 && status_.ok()) status_ = SystemError("socketpair");
    auto name = [](int a, int b) { return "proxy host " + std::to_string(a) + " <-> host " + std::to_string(b); };
    proxy_index_[key] = proxies_.size();
    proxies_.push_back(std::make_unique<FifoProxy>(fds[0], g, name(at, other)));
    proxy_index_[std::make_pair(other, at)] = proxies_.size();
    proxies_.push_back(std::make_unique<FifoProxy>(fds[1], g, name(other, at)));
    return proxies_[proxy_index_[key]].get();
  }

  int n_;
  uint32_t nstreams_;
  std::unique_ptr<uint8_t, FreeDeleter> mem_;
  std::vector<ConnCtl*> send_, recv_;
  std::vector<std::unique_ptr<uint8_t, FreeDeleter>> stage_;
  struct Conn {
    uint32_t stream;
    int from, to;
    ConnCtl* send;
    ConnCtl* far;  // the receiver's copy, when on another host
  };
  std::vector<Conn> conns_;
  std::map<std::pair<int, int>, size_t> proxy_index_;
  std::vector<std::unique_ptr<FifoProxy>> proxies_;
  Status status_;
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
  Wiring wiring(n, std::max<uint32_t>(nstreams, 1), o.geom, o.counter_base, o.hosts);
  if (!wiring.status().ok()) return wiring.status();
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
    v.tag = o.tags.empty() ? 0 : o.tags[r];
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
      if (all_done) return wiring.CheckDrained();
      for (const auto& proxy : wiring.proxies()) {
        bool m = false;
        if (Status st = proxy->Poll(&m); !st.ok()) return st;
        moved = moved || m;
      }
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
  std::atomic<bool> streams_done{false};
  Status proxy_status;
  std::mutex proxy_mu;
  // A thread per proxy, until every stream ended (or one failed: the streams then stop too).
  std::vector<std::thread> proxy_threads;
  for (const auto& proxy : wiring.proxies()) {
    proxy_threads.emplace_back([&, p = proxy.get()] {
      int idle = 0;
      while (!streams_done.load()) {
        bool m = false;
        if (Status st = p->Poll(&m); !st.ok()) {
          std::lock_guard<std::mutex> lock(proxy_mu);
          if (proxy_status.ok()) proxy_status = st;
          failed.store(true);
          return;
        }
        if (m) {
          idle = 0;
        } else if (++idle > 64) {
          std::this_thread::yield();
        }
      }
    });
  }
  // A team of team_size threads per stream; member 0 leads (and calls after_move), decisions
  // about stopping are the leader's, shared through a vote so that every member stops together.
  const int members = std::max(1, o.team_size);
  std::vector<std::unique_ptr<HostTeam::Shared>> shared;
  std::vector<std::thread> threads;
  for (auto& ru : runners) {
    shared.push_back(std::make_unique<HostTeam::Shared>(members));
    for (int m = 0; m < members; ++m) {
      threads.emplace_back([&, r = ru.get(), team = HostTeam(shared.back().get(), m)] {
        StreamExec<S, Op> exec(ViewOf(*r->program), r->view, r->stream, &r->state);
        PollUntilDone(exec, team, failed, o.timeout_s, [&](bool leader) {
          if (o.after_move && leader) o.after_move(r->rank, static_cast<int>(r->stream));
        });
      });
    }
  }
  for (auto& t : threads) t.join();
  streams_done.store(true);
  for (auto& t : proxy_threads) t.join();
  if (!proxy_status.ok()) return proxy_status;
  Status failure = FirstFailure(
      runners.size(),
      [&](size_t i, const algo::PrimProgram** p, int* rank, uint32_t* stream) {
        *p = runners[i]->program;
        *rank = runners[i]->rank;
        *stream = runners[i]->stream;
        return &runners[i]->state;
      },
      per, o.timeout_s);
  return failure.ok() ? wiring.CheckDrained() : failure;
}

}  // namespace

Status RunHostWorld(DataType type, RedOp op, const std::vector<algo::PrimProgram>& programs,
                    const std::vector<HostRankBuffers>& buffers, const HostWorldOptions& options) {
  if (Status st = CheckWorld(programs, buffers.size(), options.geom); !st.ok()) {
    return st.WithContext("RunHostWorld");
  }
  if (!options.tags.empty() && options.tags.size() != programs.size()) {
    return InvalidArgument("RunHostWorld: " + std::to_string(options.tags.size()) + " call tags for " +
                           std::to_string(programs.size()) + " ranks");
  }
  if (DataTypeSize(type) == 0) {
    return InvalidArgument("RunHostWorld: unknown data type " + std::to_string(static_cast<int>(type)));
  }
  std::vector<std::array<uint64_t, 3>> sizes;
  for (const HostRankBuffers& b : buffers) {
    // Sizes given: checked; none (all 0): the programs are trusted, as the buffers' owner said.
    const bool known = b.input_bytes || b.output_bytes || b.scratch_bytes;
    const uint64_t unknown = UINT64_MAX;
    sizes.push_back({known ? b.input_bytes : unknown, known ? b.output_bytes : unknown,
                     known ? b.scratch_bytes : unknown});
  }
  if (Status st = CheckRegions(programs, sizes, static_cast<uint32_t>(DataTypeSize(type))); !st.ok()) {
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
