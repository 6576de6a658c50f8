#include "transport/conformance/pairs.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <thread>

#include "transport/shm/shm_connection.h"
#include "transport/shm/shm_ring.h"
#include "transport/shm/shm_segment.h"
#include "core/base/socket_util.h"
#include "transport/tcp/tcp_bootstrap.h"
#include "transport/tcp/tcp_connection.h"

namespace tutti::conformance {

namespace {

FrameHeader BadMagic() {
  FrameHeader h;
  h.magic = 0xBADF00D;
  h.type = 1;  // (any type: the magic is what is wrong)
  return h;
}

Pair ShmPair(bool cma) {
  ShmOptions opts;
  opts.fifo_bytes = 64 << 10;  // small: the tests fill it
  opts.piece_bytes = 16 << 10;
  opts.use_cma = cma;
  Pair p;
  auto seg = ShmSegment::Create(ShmConnection::SegmentBytes(opts));
  if (!seg.ok()) return p;
  const std::string name = (*seg)->name();
  auto seg_b = ShmSegment::Open(name, ShmConnection::SegmentBytes(opts));
  auto seg_x = ShmSegment::Open(name, ShmConnection::SegmentBytes(opts));
  if (!seg_b.ok() || !seg_x.ok()) return p;
  auto a = ShmConnection::Make(1, getpid(), std::move(*seg), /*creator=*/true, /*lower=*/true, opts);
  auto b = ShmConnection::Make(0, getpid(), std::move(*seg_b), false, false, opts);
  if (!a.ok() || !b.ok()) return p;
  (*a)->UnlinkName();
  p.a = std::move(*a);
  p.b = std::move(*b);
  // The ring from the higher rank to the lower is the second of the segment.
  std::shared_ptr<ShmSegment> mapping(std::move(*seg_x));
  p.keep = mapping;
  p.inject_garbage_to_a = [mapping, opts] {
    ShmRing w;
    char* ring1 = static_cast<char*>(mapping->data()) + ShmRing::BytesFor(opts.fifo_bytes);
    if (w.Attach(ring1, opts.fifo_bytes).ok()) w.TryWrite(BadMagic(), nullptr);
  };
  return p;
}

Pair TcpPair(int nsocks) {
  Pair p;
  auto l = TcpListener::Open("");
  if (!l.ok()) return p;
  TcpHandshake h0{42, 0, "conformance", nsocks}, h1{42, 1, "conformance", nsocks};
  std::vector<int> fds_b;
  std::thread t([&] {
    auto r = ConnectToPeer((*l)->local_address(), 0, h1, DeadlineIn(10));
    if (r.ok()) fds_b = *r;
  });
  auto got = (*l)->Accept(h0, {1}, DeadlineIn(10));
  t.join();
  if (!got.ok() || fds_b.empty()) return p;
  // Tuned as TcpSetup tunes them (TCP_NODELAY above all: without it a lone small frame can
  // wait for the peer's delayed ACK, tens of ms).
  for (int fd : (*got)[1]) TuneSocket(fd, 0, 0);
  for (int fd : fds_b) TuneSocket(fd, 0, 0);
  const int raw = dup(fds_b[0]);  // b's control socket, for the injector
  auto a = TcpConnection::Make(1, (*got)[1], TcpOptions{});
  auto b = TcpConnection::Make(0, fds_b, TcpOptions{});
  if (!a.ok() || !b.ok()) return p;
  p.a = std::move(*a);
  p.b = std::move(*b);
  p.keep = std::shared_ptr<void>(nullptr, [raw](void*) { close(raw); });
  p.inject_garbage_to_a = [raw] {
    FrameHeader h = BadMagic();
    (void)!send(raw, &h, sizeof(h), MSG_NOSIGNAL);
  };
  return p;
}

}  // namespace

std::vector<PairFactory> AllTransports() {
  return {
      {"shm", [] { return ShmPair(false); }},
      {"shm_cma", [] { return ShmPair(true); }},
      {"tcp_1sock", [] { return TcpPair(1); }},
      {"tcp_3socks", [] { return TcpPair(3); }},
  };
}

}  // namespace tutti::conformance
