// p2p_bench: point-to-point latency and bandwidth between 2 processes over shm and tcp, each
// beside its baseline measured by the same processes in the same repetitions (shm: a spin
// ping-pong through a shared page, memcpy; tcp: a raw loopback connection between the ranks).
// Prints medians over repetitions and the median of the per-repetition ratios, which is robust
// to a noisy, shared machine.
//
//   bazel run -c opt //bench:p2p_bench            # full run
//   bazel run -c opt //bench:p2p_bench -- --quick # a few iterations (smoke test)
//   bazel run -c opt //bench:p2p_bench -- --transport shm   # one transport only
//   bazel run -c opt //bench:p2p_bench -- --latency         # the 8-byte ping-pong only
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "bench/raw_baselines.h"
#include "core/communicator.h"
#include "core/launch/spawn.h"

namespace tutti::bench {
namespace {

struct Config {
  int reps = 9;
  int lat_iters = 20000;
  int bw_iters_1m = 200;
  int bw_iters_64m = 6;
  bool bandwidth = true;
};

struct Series {  // per repetition: tutti and its baseline
  std::vector<double> tutti, base;
};

[[noreturn]] void Die(int rank, const Status& st) {
  fprintf(stderr, "rank %d: %s\n", rank, st.ToString().c_str());
  _exit(1);
}

template <typename T>
T Must(int rank, Result<T> r) {
  if (!r.ok()) Die(rank, r.status());
  return *r;
}

// Rank 0 measures, rank 1 answers. Rank 0 writes the series to out_fd.
int RankMain(int rank, const std::string& transport, const Config& cfg, SpinLines* spin, int out_fd) {
  CommOptions o;
  o.transport = transport;
  o.timeout_s = 120;
  auto comm = Communicator::InitFromEnv(o);
  if (!comm.ok()) Die(rank, comm.status());
  Communicator& c = **comm;
  const int peer = 1 - rank;
  auto check = [&](const Status& st) {
    if (!st.ok()) Die(rank, st);
  };
  const bool tcp = transport == "tcp";
  // The raw TCP baseline connection between the two ranks.
  int raw = -1;
  if (tcp) {
    if (rank == 1) {
      int port = 0;
      int lfd = Must(rank, RawListen(&port));
      check(c.Send(&port, sizeof(port), peer, 9));
      raw = Must(rank, RawAccept(lfd));
      close(lfd);
    } else {
      int port = 0;
      check(c.Recv(&port, sizeof(port), peer, 9));
      raw = Must(rank, RawConnect(port));
    }
  }
  std::pair<size_t, int> sizes[2] = {{size_t{1} << 20, cfg.bw_iters_1m}, {size_t{64} << 20, cfg.bw_iters_64m}};
  std::vector<char> bufs[2];
  for (int s = 0; s < 2; ++s) bufs[s].assign(sizes[s].first, static_cast<char>(rank + 1));
  Series lat, bw[2];
  char small[8] = {};
  for (int rep = 0; rep < cfg.reps; ++rep) {
    // Latency: 8-byte ping-pong; one-way = round trip / 2.
    double t0 = NowSeconds();
    for (int i = 0; i < cfg.lat_iters; ++i) {
      if (rank == 0) {
        check(c.Send(small, 8, peer, 0));
        check(c.Recv(small, 8, peer, 0));
      } else {
        check(c.Recv(small, 8, peer, 0));
        check(c.Send(small, 8, peer, 0));
      }
    }
    lat.tutti.push_back((NowSeconds() - t0) / cfg.lat_iters / 2);
    lat.base.push_back(tcp ? Must(rank, RawPingPong(raw, cfg.lat_iters, rank == 0))
                           : Must(rank, SpinPingPong(spin, cfg.lat_iters, rank == 0)));
    if (!cfg.bandwidth) continue;
    // Bandwidth: rank 0 sends; a send completes when the receiver holds the data.
    for (int s = 0; s < 2; ++s) {
      auto [bytes, iters] = sizes[s];
      char* buf = bufs[s].data();
      t0 = NowSeconds();
      for (int i = 0; i < iters; ++i) check(rank == 0 ? c.Send(buf, bytes, peer, 1) : c.Recv(buf, bytes, peer, 1));
      bw[s].tutti.push_back(bytes * static_cast<double>(iters) / (NowSeconds() - t0));
      if (tcp) {
        bw[s].base.push_back(Must(rank, RawStream(raw, bytes, iters, rank == 0)));
      } else {
        // memcpy on rank 0 while rank 1 waits for the next message.
        bw[s].base.push_back(rank == 0 ? MemcpyBandwidth(bytes, iters) : 0);
      }
    }
  }
  if (rank == 0) {
    std::string out;
    auto put = [&](const char* name, const Series& sr) {
      for (size_t i = 0; i < sr.tutti.size(); ++i) {
        char line[128];
        snprintf(line, sizeof(line), "%s %.9g %.9g\n", name, sr.tutti[i], sr.base[i]);
        out += line;
      }
    };
    put("lat", lat);
    put("bw1m", bw[0]);
    put("bw64m", bw[1]);
    if (write(out_fd, out.data(), out.size()) != static_cast<ssize_t>(out.size())) return 1;
  }
  if (raw >= 0) close(raw);
  c.Destroy();
  return 0;
}

struct Row {
  Series s;
  double tutti() const { return Median(s.tutti); }
  double base() const { return Median(s.base); }
  double ratio() const {
    std::vector<double> r;
    for (size_t i = 0; i < s.tutti.size(); ++i)
      if (s.base[i] > 0) r.push_back(s.tutti[i] / s.base[i]);
    return Median(r);
  }
};

std::map<std::string, Row> Parse(const std::string& text) {
  std::map<std::string, Row> rows;
  char name[16];
  double t, b;
  const char* p = text.c_str();
  int used = 0;
  while (sscanf(p, "%15s %lf %lf\n%n", name, &t, &b, &used) == 3) {
    rows[name].s.tutti.push_back(t);
    rows[name].s.base.push_back(b);
    p += used;
  }
  return rows;
}

int Main(int argc, char** argv) {
  Config cfg;
  std::vector<const char*> transports = {"shm", "tcp"};
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--quick")) {
      cfg = Config{3, 300, 5, 2};
    } else if (!strcmp(argv[i], "--latency")) {
      cfg.bandwidth = false;
    } else if (!strcmp(argv[i], "--transport") && i + 1 < argc &&
               (!strcmp(argv[i + 1], "shm") || !strcmp(argv[i + 1], "tcp"))) {
      transports = {argv[++i]};
    } else {
      fprintf(stderr, "usage: p2p_bench [--quick] [--latency] [--transport shm|tcp]\n");
      return 2;
    }
  }
  printf("# tutti p2p_bench: 2 processes on this host; medians of %d repetitions, each baseline\n"
         "# measured by the same processes in the same repetition; ratio = median of per-repetition ratios\n",
         cfg.reps);
  printf("%-5s %-10s %7s %14s   %-24s %14s %7s\n", "path", "test", "size", "tutti", "baseline", "baseline",
         "ratio");
  SpinLines* spin = MapSpinLines();
  for (const char* transport : transports) {
    int fds[2];
    if (pipe(fds) != 0) return 1;
    Status st = Spawn(2, [&](int rank) { return RankMain(rank, transport, cfg, spin, fds[1]); });
    close(fds[1]);
    std::string text;
    char buf[4096];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof(buf))) > 0) text.append(buf, n);
    close(fds[0]);
    if (!st.ok()) {
      fprintf(stderr, "%s run failed: %s\n", transport, st.ToString().c_str());
      return 1;
    }
    auto rows = Parse(text);
    const bool tcp = !strcmp(transport, "tcp");
    const Row& lat = rows["lat"];
    printf("%-5s %-10s %7s %11.2f us   %-24s %11.2f us %6.0f%%\n", transport, "latency", "8 B", lat.tutti() * 1e6,
           tcp ? "raw TCP ping-pong" : "spin ping-pong (floor)", lat.base() * 1e6, 100 * lat.ratio());
    if (!cfg.bandwidth) continue;
    const char* base = tcp ? "raw TCP loopback stream" : "memcpy";
    for (auto [key, label] : {std::pair{"bw1m", "1 MiB"}, std::pair{"bw64m", "64 MiB"}}) {
      const Row& r = rows[key];
      printf("%-5s %-10s %7s %9.2f GB/s   %-24s %9.2f GB/s %6.0f%%\n", transport, "bandwidth", label, r.tutti() / 1e9,
             base, r.base() / 1e9, 100 * r.ratio());
    }
    fflush(stdout);
  }
  return 0;
}

}  // namespace
}  // namespace tutti::bench

int main(int argc, char** argv) { return tutti::bench::Main(argc, argv); }
