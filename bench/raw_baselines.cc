#include "bench/raw_baselines.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include "bench/bench_util.h"
#include "transport/tcp/socket_util.h"

namespace tutti::bench {

double MemcpyBandwidth(size_t bytes, int iters, int reps) {
  std::vector<char> a(bytes, 1), b(bytes, 2);
  std::vector<double> v;
  for (int r = 0; r < reps; ++r) {
    double t0 = NowSeconds();
    for (int i = 0; i < iters; ++i) {
      memcpy(b.data(), a.data(), bytes);
      asm volatile("" ::"r"(b.data()) : "memory");
    }
    v.push_back(bytes * static_cast<double>(iters) / (NowSeconds() - t0));
  }
  return Median(v);
}

namespace {
void Tune(int fd) {
  int one = 1, buf = 4 << 20;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
}

bool Full(int fd, void* p, size_t n, bool write_side) {
  char* c = static_cast<char*>(p);
  while (n > 0) {
    ssize_t r = write_side ? send(fd, c, n, MSG_NOSIGNAL) : recv(fd, c, n, 0);
    if (r <= 0) {
      if (r < 0 && errno == EINTR) continue;
      return false;
    }
    c += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

// The echo side, in the child.
void Peer(int fd, int lat_iters, const std::vector<std::pair<size_t, int>>& sizes, int reps) {
  char small[8];
  for (int r = 0; r < reps; ++r)
    for (int i = 0; i < lat_iters; ++i)
      if (!Full(fd, small, 8, false) || !Full(fd, small, 8, true)) _exit(1);
  for (auto [bytes, iters] : sizes) {
    std::vector<char> buf(bytes);
    for (int r = 0; r < reps; ++r)
      for (int i = 0; i < iters; ++i)
        if (!Full(fd, buf.data(), bytes, false) || !Full(fd, small, 1, true)) _exit(1);
  }
  _exit(0);
}
}  // namespace

Result<RawTcpFigures> RawTcpBaseline(int lat_iters, const std::vector<std::pair<size_t, int>>& sizes, int reps) {
  int port = 0;
  TUTTI_ASSIGN_OR_RETURN(int lfd, ListenTcp("127.0.0.1", 0, &port));
  pid_t child = fork();
  if (child < 0) return SystemError("fork");
  if (child == 0) {
    close(lfd);
    auto fd = ConnectTcp("127.0.0.1", port, DeadlineIn(10));
    if (!fd.ok()) _exit(1);
    Tune(*fd);
    Peer(*fd, lat_iters, sizes, reps);
  }
  int fd = accept(lfd, nullptr, nullptr);
  close(lfd);
  if (fd < 0) return SystemError("accept");
  Tune(fd);
  RawTcpFigures f;
  char small[8] = {};
  std::vector<double> lat;
  bool ok = true;
  for (int r = 0; r < reps && ok; ++r) {
    double t0 = NowSeconds();
    for (int i = 0; i < lat_iters && ok; ++i) ok = Full(fd, small, 8, true) && Full(fd, small, 8, false);
    lat.push_back((NowSeconds() - t0) / lat_iters / 2);
  }
  f.latency = Median(lat);
  for (auto [bytes, iters] : sizes) {
    std::vector<char> buf(bytes, 3);
    std::vector<double> bw;
    for (int r = 0; r < reps && ok; ++r) {
      double t0 = NowSeconds();
      for (int i = 0; i < iters && ok; ++i) ok = Full(fd, buf.data(), bytes, true) && Full(fd, small, 1, false);
      bw.push_back(bytes * static_cast<double>(iters) / (NowSeconds() - t0));
    }
    f.bandwidth.push_back(Median(bw));
  }
  close(fd);
  int status = 0;
  waitpid(child, &status, 0);
  if (!ok || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return RemoteError("raw TCP baseline peer failed");
  return f;
}

}  // namespace tutti::bench
