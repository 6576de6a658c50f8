#include "bench/raw_baselines.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <new>
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

struct SpinLines {
  struct alignas(64) Line {
    std::atomic<uint64_t> seq;
    char data[8];
  };
  Line line[2];  // line[r]: what rank r receives
};

SpinLines* MapSpinLines() {
  void* p = mmap(nullptr, sizeof(SpinLines), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  return new (p) SpinLines();
}

Result<double> SpinPingPong(SpinLines* lines, int iters, bool initiator, double timeout_s) {
  if (lines == nullptr) return InternalError("spin ping-pong: no shared page (mmap failed)");
  SpinLines::Line& mine = lines->line[initiator ? 0 : 1];
  SpinLines::Line& theirs = lines->line[initiator ? 1 : 0];
  // Sequence numbers continue across calls: each call moves both lines forward by iters. Each
  // process counts for itself (reading the line could see the peer's next call already).
  static uint64_t done = 0;
  const uint64_t base = done;
  done += iters;
  char small[8] = {};
  auto await = [&](uint64_t want) -> Status {
    const double give_up = NowSeconds() + timeout_s;
    for (uint32_t n = 1; mine.seq.load(std::memory_order_acquire) < want; ++n)
      if (n % 4096 == 0 && NowSeconds() > give_up) return TimeoutError("spin ping-pong: the other rank stopped answering");
    memcpy(small, mine.data, 8);
    return OkStatus();
  };
  auto put = [&](uint64_t seq) {
    memcpy(theirs.data, small, 8);
    theirs.seq.store(seq, std::memory_order_release);
  };
  double t0 = NowSeconds();
  for (int i = 1; i <= iters; ++i) {
    if (initiator) {
      put(base + i);
      TUTTI_RETURN_IF_ERROR(await(base + i));
    } else {
      TUTTI_RETURN_IF_ERROR(await(base + i));
      put(base + i);
    }
  }
  return (NowSeconds() - t0) / iters / 2;
}

}  // namespace tutti::bench
