#include "bench/raw_baselines.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "bench/bench_util.h"
#include "core/base/socket_util.h"

namespace tutti::bench {

double MemcpyBandwidth(size_t bytes, int iters) {
  static std::vector<char> a, b;
  if (a.size() != bytes) {
    a.assign(bytes, 1);
    b.assign(bytes, 2);
  }
  double t0 = NowSeconds();
  for (int i = 0; i < iters; ++i) {
    memcpy(b.data(), a.data(), bytes);
    asm volatile("" ::"r"(b.data()) : "memory");
  }
  return bytes * static_cast<double>(iters) / (NowSeconds() - t0);
}

namespace {
void Tune(int fd) {
  int one = 1, buf = 4 << 20;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
}

Status Full(int fd, void* p, size_t n, bool write_side) {
  char* c = static_cast<char*>(p);
  while (n > 0) {
    ssize_t r = write_side ? send(fd, c, n, MSG_NOSIGNAL) : recv(fd, c, n, 0);
    if (r <= 0) {
      if (r < 0 && errno == EINTR) continue;
      return r == 0 ? RemoteError("raw TCP peer closed") : SystemError("raw TCP");
    }
    c += r;
    n -= static_cast<size_t>(r);
  }
  return OkStatus();
}
}  // namespace

Result<int> RawListen(int* port) { return ListenTcp("127.0.0.1", 0, port); }

Result<int> RawAccept(int listen_fd) {
  int fd = accept(listen_fd, nullptr, nullptr);
  if (fd < 0) return SystemError("accept");
  Tune(fd);
  return fd;
}

Result<int> RawConnect(int port) {
  TUTTI_ASSIGN_OR_RETURN(int fd, ConnectTcp("127.0.0.1", port, DeadlineIn(10)));
  Tune(fd);
  return fd;
}

Result<double> RawPingPong(int fd, int iters, bool initiator) {
  char small[8] = {};
  double t0 = NowSeconds();
  for (int i = 0; i < iters; ++i) {
    TUTTI_RETURN_IF_ERROR(Full(fd, small, 8, initiator));
    TUTTI_RETURN_IF_ERROR(Full(fd, small, 8, !initiator));
  }
  return (NowSeconds() - t0) / iters / 2;
}

Result<double> RawStream(int fd, size_t bytes, int iters, bool sender) {
  static std::vector<char> buf;
  if (buf.size() != bytes) buf.assign(bytes, 3);
  char ack = 0;
  double t0 = NowSeconds();
  for (int i = 0; i < iters; ++i) {
    TUTTI_RETURN_IF_ERROR(Full(fd, buf.data(), bytes, sender));
    TUTTI_RETURN_IF_ERROR(Full(fd, &ack, 1, !sender));
  }
  return bytes * static_cast<double>(iters) / (NowSeconds() - t0);
}

}  // namespace tutti::bench
