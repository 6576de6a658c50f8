// p2p_bench: point-to-point latency and bandwidth between 2 processes over shm and tcp, beside
// the plain baselines measured in the same run (memcpy; a raw TCP loopback stream and
// ping-pong). Prints medians over repetitions.
//
//   bazel run -c opt //bench:p2p_bench            # full run
//   bazel run -c opt //bench:p2p_bench -- --quick # a few iterations (smoke test)
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "bench/raw_baselines.h"
#include "core/communicator.h"
#include "core/launch/spawn.h"

namespace tutti::bench {
namespace {

struct Config {
  int reps = 7;
  int lat_iters = 20000;
  int bw_iters_1m = 200;
  int bw_iters_64m = 6;
};

// Rank 0 measures, rank 1 echoes. Results go to `out_fd` as "name value" lines.
int RankMain(int rank, const std::string& transport, const Config& cfg, int out_fd) {
  CommOptions o;
  o.transport = transport;
  o.timeout_s = 60;
  auto comm = Communicator::InitFromEnv(o);
  if (!comm.ok()) {
    fprintf(stderr, "rank %d: %s\n", rank, comm.status().ToString().c_str());
    return 1;
  }
  Communicator& c = **comm;
  const int peer = 1 - rank;
  auto check = [&](const Status& st) {
    if (!st.ok()) {
      fprintf(stderr, "rank %d: %s\n", rank, st.ToString().c_str());
      _exit(1);
    }
  };
  // Latency: 8-byte ping-pong; one-way = round trip / 2.
  char small[8] = {};
  std::vector<double> lat;
  for (int rep = 0; rep < cfg.reps; ++rep) {
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
    lat.push_back((NowSeconds() - t0) / cfg.lat_iters / 2);
  }
  // Bandwidth: rank 0 sends; a send completes when the receiver holds the data.
  std::vector<std::pair<size_t, int>> sizes = {{size_t{1} << 20, cfg.bw_iters_1m}, {size_t{64} << 20, cfg.bw_iters_64m}};
  std::vector<double> bw[2];
  for (size_t s = 0; s < sizes.size(); ++s) {
    auto [bytes, iters] = sizes[s];
    std::vector<char> buf(bytes, static_cast<char>(rank + 1));
    for (int rep = 0; rep < cfg.reps; ++rep) {
      double t0 = NowSeconds();
      for (int i = 0; i < iters; ++i)
        check(rank == 0 ? c.Send(buf.data(), bytes, peer, 1) : c.Recv(buf.data(), bytes, peer, 1));
      bw[s].push_back(bytes * static_cast<double>(iters) / (NowSeconds() - t0));
    }
  }
  if (rank == 0) {
    char out[256];
    int n = snprintf(out, sizeof(out), "lat %.9g\nbw1m %.9g\nbw64m %.9g\n", Median(lat), Median(bw[0]), Median(bw[1]));
    if (write(out_fd, out, n) != n) return 1;
  }
  c.Destroy();
  return 0;
}

struct Figures {
  double lat = 0, bw1m = 0, bw64m = 0;
};

Figures ParseFigures(const std::string& text) {
  Figures f;
  char name[16];
  double v;
  const char* p = text.c_str();
  int used = 0;
  while (sscanf(p, "%15s %lf\n%n", name, &v, &used) == 2) {
    if (!strcmp(name, "lat")) f.lat = v;
    if (!strcmp(name, "bw1m")) f.bw1m = v;
    if (!strcmp(name, "bw64m")) f.bw64m = v;
    p += used;
  }
  return f;
}

int Main(int argc, char** argv) {
  Config cfg;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--quick")) cfg = Config{3, 200, 5, 2};
    else {
      fprintf(stderr, "usage: p2p_bench [--quick]\n");
      return 2;
    }
  }
  // Baselines first, in this process and a forked peer.
  double memcpy1m = MemcpyBandwidth(size_t{1} << 20, cfg.bw_iters_1m, cfg.reps);
  double memcpy64m = MemcpyBandwidth(size_t{64} << 20, cfg.bw_iters_64m, cfg.reps);
  auto tcp = RawTcpBaseline(cfg.lat_iters, {{size_t{1} << 20, cfg.bw_iters_1m}, {size_t{64} << 20, cfg.bw_iters_64m}},
                            cfg.reps);
  if (!tcp.ok()) {
    fprintf(stderr, "raw TCP baseline failed: %s\n", tcp.status().ToString().c_str());
    return 1;
  }
  Figures got[2];
  const char* transports[2] = {"shm", "tcp"};
  for (int t = 0; t < 2; ++t) {
    int fds[2];
    if (pipe(fds) != 0) return 1;
    Status st = Spawn(2, [&](int rank) { return RankMain(rank, transports[t], cfg, fds[1]); });
    close(fds[1]);
    std::string text;
    char buf[256];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof(buf))) > 0) text.append(buf, n);
    close(fds[0]);
    if (!st.ok()) {
      fprintf(stderr, "%s run failed: %s\n", transports[t], st.ToString().c_str());
      return 1;
    }
    got[t] = ParseFigures(text);
  }
  printf("# tutti p2p_bench: 2 processes on this host, medians of %d repetitions\n", cfg.reps);
  printf("%-5s %-10s %8s %14s   %-26s %14s %7s\n", "path", "test", "size", "tutti", "baseline (same run)", "baseline", "ratio");
  auto row = [](const char* path, const char* test, const char* size, double v, const char* base, double b, bool lat) {
    if (lat)
      printf("%-5s %-10s %8s %11.2f us   %-26s %11.2f us %6.0f%%\n", path, test, size, v * 1e6, base, b * 1e6,
             b > 0 ? 100 * v / b : 0);
    else
      printf("%-5s %-10s %8s %9.2f GB/s   %-26s %9.2f GB/s %6.0f%%\n", path, test, size, v / 1e9, base, b / 1e9,
             b > 0 ? 100 * v / b : 0);
  };
  row("shm", "latency", "8 B", got[0].lat, "raw TCP ping-pong", tcp->latency, true);
  row("shm", "bandwidth", "1 MiB", got[0].bw1m, "memcpy", memcpy1m, false);
  row("shm", "bandwidth", "64 MiB", got[0].bw64m, "memcpy", memcpy64m, false);
  row("tcp", "latency", "8 B", got[1].lat, "raw TCP ping-pong", tcp->latency, true);
  row("tcp", "bandwidth", "1 MiB", got[1].bw1m, "raw TCP loopback stream", tcp->bandwidth[0], false);
  row("tcp", "bandwidth", "64 MiB", got[1].bw64m, "raw TCP loopback stream", tcp->bandwidth[1], false);
  return 0;
}

}  // namespace
}  // namespace tutti::bench

int main(int argc, char** argv) { return tutti::bench::Main(argc, argv); }
