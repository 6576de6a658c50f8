// The CPU cost of the point-to-point engine's hot path, without waiting: two engines in one
// thread, joined by a real transport pair, play ping-pong with 8-byte messages; each message is
// posted, driven and completed by polling the engines in turn, so the time per round trip is
// what the two ranks' code costs (matching, frames, protocol, completion), not how long a core
// takes to notice a flag. User messages (DATA, answered by ACK) and collective ones (POST).
//
//   bazel run -c opt //bench:engine_bench
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <memory>

#include "core/p2p/engine.h"
#include "transport/conformance/pairs.h"

namespace tutti {
namespace {

struct Engines {
  std::shared_ptr<void> keep;
  std::unique_ptr<P2PEngine> e[2];
};

Engines Make(const conformance::PairFactory& f) {
  conformance::Pair pair = f.make();
  if (!pair.a || !pair.b) abort();
  Engines s;
  s.keep = pair.keep;
  for (int r = 0; r < 2; ++r) {
    EngineOptions o;
    o.rank = r;
    o.size = 2;
    o.timeout_s = 30;
    s.e[r] = std::make_unique<P2PEngine>(o);
  }
  s.e[0]->SetConnection(1, std::move(pair.a));
  s.e[1]->SetConnection(0, std::move(pair.b));
  return s;
}

conformance::PairFactory Transport(const char* name) {
  for (auto& f : conformance::AllTransports())
    if (f.name == name) return f;
  abort();
}

// One message from `from` to `to`: the receive is posted first (as in a ping-pong, where the
// answer's receive waits), then the send; both engines are polled until both ops are done.
void OneWay(Engines& s, int from, int tag, uint32_t sig, char* out, char* in) {
  auto recv = s.e[1 - from]->PostRecv(in, 8, from, tag, sig);
  auto send = s.e[from]->PostSend(out, 8, 1 - from, tag, sig);
  if (!recv.ok() || !send.ok()) abort();
  for (long spins = 0; !(*recv)->done.load() || !(*send)->done.load(); ++spins) {
    s.e[1 - from]->Poll();
    s.e[from]->Poll();
    if (spins > 100000000) abort();
  }
  if (!(*recv)->status.ok() || !(*send)->status.ok()) abort();
}

void PingPong(benchmark::State& state, const char* transport, int tag, uint32_t sig) {
  Engines s = Make(Transport(transport));
  char a[8] = {1}, b[8] = {};
  for (auto _ : state) {
    OneWay(s, 0, tag, sig, a, b);
    OneWay(s, 1, tag, sig, b, a);
  }
  state.SetItemsProcessed(2 * state.iterations());  // messages
}

BENCHMARK_CAPTURE(PingPong, shm_user_data_ack, "shm", 0, 0u);
BENCHMARK_CAPTURE(PingPong, shm_collective_post, "shm", -5, 0x1234u);
BENCHMARK_CAPTURE(PingPong, tcp_user_data_ack, "tcp_1sock", 0, 0u);
BENCHMARK_CAPTURE(PingPong, tcp_collective_post, "tcp_1sock", -5, 0x1234u);

}  // namespace
}  // namespace tutti
