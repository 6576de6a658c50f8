#include "transport/tcp/tcp_connection.h"

#include <arpa/inet.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstring>

#include "core/base/logging.h"
#include "core/base/socket_util.h"

namespace tutti {

namespace {
// Bytes a read asks for when it is not the rest of a large payload (Sock::rbuf).
constexpr size_t kReadAhead = 16 << 10;
// An idle bulk socket, when no bulk bytes are owed, is read at least every 2^kMaxIdleExp-th pass.
constexpr uint32_t kMaxIdleExp = 4;
}  // namespace

Result<std::unique_ptr<TcpConnection>> TcpConnection::Make(int peer, std::vector<int> fds,
                                                           const TcpOptions& opts) {
  if (fds.empty()) return InternalError("TCP connection without sockets");
  auto c = std::unique_ptr<TcpConnection>(new TcpConnection(peer, opts));
  for (int fd : fds) {
    Sock s;
    s.fd = fd;
    c->socks_.push_back(std::move(s));
  }
  for (auto& s : c->socks_) TUTTI_RETURN_IF_ERROR(SetNonBlocking(s.fd, true));
  c->bulk_on_control_ = opts.bulk_on_control >= 0 ? opts.bulk_on_control > 0 : SameHost(fds[0]);
  return c;
}

bool TcpConnection::SameHost(int fd) {
  sockaddr_storage a{}, b{};
  socklen_t la = sizeof(a), lb = sizeof(b);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&a), &la) != 0 ||
      getpeername(fd, reinterpret_cast<sockaddr*>(&b), &lb) != 0 || a.ss_family != b.ss_family)
    return false;
  if (a.ss_family == AF_INET) {
    const in_addr x = reinterpret_cast<const sockaddr_in*>(&a)->sin_addr;
    const in_addr y = reinterpret_cast<const sockaddr_in*>(&b)->sin_addr;
    return x.s_addr == y.s_addr || (ntohl(y.s_addr) >> 24) == 127;
  }
  if (a.ss_family == AF_INET6) {
    const in6_addr& x = reinterpret_cast<const sockaddr_in6*>(&a)->sin6_addr;
    const in6_addr& y = reinterpret_cast<const sockaddr_in6*>(&b)->sin6_addr;
    return std::memcmp(&x, &y, sizeof(x)) == 0 || IN6_IS_ADDR_LOOPBACK(&y);
  }
  return false;
}

void TcpConnection::ExpectBulk(uint64_t bytes) {
  if (bytes == 0) return;
  // The peer's bulk frames follow: read the bulk sockets at every pass until they came.
  bulk_owed_ += bytes;
  for (size_t i = 1; i < socks_.size(); ++i) socks_[i].idle_exp = socks_[i].skip = 0;
}

std::string TcpConnection::Who() const { return "TCP connection to rank " + std::to_string(peer()); }

Status TcpConnection::Enqueue(const FrameHeader& h, const void* payload, uint64_t cookie) {
  if (closed_) return InvalidUsage(Who() + " is closed");
  size_t idx = 0;
  if ((h.flags & kFrameBulk) != 0 && socks_.size() > 1) idx = BulkSocket(h.payload_len);
  Sock& s = socks_[idx];
  s.out.push_back({h, payload, cookie, 0});
  s.queued += h.payload_len;
  queued_bytes_ += kFrameHeaderSize + h.payload_len;
  // (A failed write leaves the frame queued: the next Progress meets the error again, and first
  // reads what the peer sent before it went away.)
  if (s.out.size() == 1) (void)WriteSome(s);
  return OkStatus();
}

// Where a bulk piece goes. Between hosts: never on the control socket while there is another
// (a piece of megabytes queued there holds up the CTS, ACK and small frames behind it for as long
// as the link takes to send it: 17 ms for 2 MiB at 1 Gbit/s, as NCCL keeps its control socket
// apart too), and on the socket whose backlog drains first: the fewest bytes queued here and not
// yet sent by the kernel. (Counting only what is queued here is blind once the socket buffers
// take every piece at once, as buffers of megabytes do: the pieces were dealt out evenly, and
// when one TCP flow ran slower than the other for a while a message waited for the slower
// socket's last pieces while the faster idled. 2 hosts, 1 Gbit/s links, all_gather: 16 MiB
// 114-117 -> 117-119 MB/s, 64 MiB 107-111 -> 118 MB/s.) On one host (loopback), where a socket's
// queue drains at the speed of the CPUs, every socket takes pieces, by what is queued here:
// spreading them was faster there (2 ranks, 16 MiB all_reduce: 11.4 ms over every socket, 12.9
// ms off the control socket). Pieces below kAskKernelFrom skip the kernel's count (a system call
// per socket).
size_t TcpConnection::BulkSocket(size_t bytes) const {
  const bool ask = !bulk_on_control_ && bytes >= kAskKernelFrom;
  size_t best = 0;
  uint64_t least = UINT64_MAX;
  for (size_t i = bulk_on_control_ ? 0 : 1; i < socks_.size(); ++i) {
    const Sock& s = socks_[i];
    if (s.fd < 0) continue;
    uint64_t backlog = s.queued;
    int unsent = 0;
    if (ask && ioctl(s.fd, SIOCOUTQNSD, &unsent) == 0 && unsent > 0) backlog += static_cast<uint64_t>(unsent);
    if (backlog < least) {
      least = backlog;
      best = i;
    }
  }
  return best;
}

Result<bool> TcpConnection::WriteSome(Sock& s) {
  bool moved = false;
  while (!s.out.empty()) {
    Out& o = s.out.front();
    iovec iov[2];
    int n = 0;
    if (o.sent < kFrameHeaderSize) {
      iov[n++] = {reinterpret_cast<char*>(&o.h) + o.sent, kFrameHeaderSize - o.sent};
      if (o.h.payload_len > 0) iov[n++] = {const_cast<void*>(o.payload), o.h.payload_len};
    } else {
      size_t off = o.sent - kFrameHeaderSize;
      iov[n++] = {const_cast<char*>(static_cast<const char*>(o.payload)) + off, o.h.payload_len - off};
    }
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = n;
    ssize_t w = sendmsg(s.fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      return SystemError(Who() + ": send");
    }
    moved = true;
    o.sent += static_cast<size_t>(w);
    if (o.sent == kFrameHeaderSize + o.h.payload_len) {
      queued_bytes_ -= kFrameHeaderSize + o.h.payload_len;
      s.queued -= o.h.payload_len;
      NoteSent(o.cookie);
      s.out.pop_front();
    }
  }
  return moved;
}

Result<size_t> TcpConnection::Take(Sock& s, const char* p, size_t n, FrameSink& sink) {
  size_t k;
  if (!s.in_payload) {
    k = std::min(n, kFrameHeaderSize - s.hdr_got);
    std::memcpy(reinterpret_cast<char*>(&s.h) + s.hdr_got, p, k);
    s.hdr_got += k;
  } else {
    k = std::min(n, s.h.payload_len - s.got);
    if (s.dst != nullptr) std::memcpy(s.dst + s.got, p, k);
    s.got += k;
  }
  TUTTI_RETURN_IF_ERROR(EndOfPart(s, sink));
  return k;
}

Status TcpConnection::EndOfPart(Sock& s, FrameSink& sink) {
  if (!s.in_payload) {
    if (s.hdr_got < kFrameHeaderSize) return OkStatus();
    s.hdr_got = 0;
    TUTTI_RETURN_IF_ERROR(ValidateEnvelope(s.h, opts_.max_payload).WithContext(Who()));
    TUTTI_ASSIGN_OR_RETURN(void* dst, sink.OnHeader(peer(), s.h));
    s.dst = static_cast<char*>(dst);
    s.got = 0;
    s.in_payload = true;
  }
  if (s.got < s.h.payload_len) return OkStatus();
  s.in_payload = false;
  FrameHeader h = s.h;
  if ((h.flags & kFrameBulk) != 0) bulk_owed_ -= h.payload_len < bulk_owed_ ? h.payload_len : bulk_owed_;
  return sink.OnFrame(peer(), h);
}

Result<bool> TcpConnection::ReadSome(Sock& s, FrameSink& sink, bool may_recv) {
  bool moved = false;
  bool drained = !may_recv;  // a read returned less than it asked for: nothing more to read now
  size_t budget = opts_.read_budget;
  while (!closed_) {
    // What was read ahead goes first, all of it: a pass leaves nothing in the read-ahead (but
    // when the connection closed or failed), since no wait fd would show bytes kept there.
    if (s.rpos < s.rlen) {
      TUTTI_ASSIGN_OR_RETURN(size_t k, Take(s, s.rbuf.get() + s.rpos, s.rlen - s.rpos, sink));
      s.rpos += k;
      moved = true;
      continue;
    }
    if (drained || budget == 0) break;
    ssize_t r;
    size_t asked;
    const size_t rest = s.in_payload ? s.h.payload_len - s.got : 0;
    if (s.in_payload && rest >= kReadAhead) {
      // The rest of a large payload: straight into its destination.
      char* to;
      if (s.dst != nullptr) {
        to = s.dst + s.got;
        asked = rest;
      } else {
        if (discard_.empty()) discard_.resize(64 << 10);
        to = discard_.data();
        asked = std::min(rest, discard_.size());
      }
      r = recv(s.fd, to, asked, MSG_DONTWAIT);
      if (r > 0) {
        s.got += static_cast<size_t>(r);
        TUTTI_RETURN_IF_ERROR(EndOfPart(s, sink));
      }
    } else {
      if (!s.rbuf) s.rbuf = std::make_unique<char[]>(kReadAhead);
      asked = kReadAhead;
      r = recv(s.fd, s.rbuf.get(), asked, MSG_DONTWAIT);
      if (r > 0) {
        s.rpos = 0;
        s.rlen = static_cast<size_t>(r);
      }
    }
    if (r == 0) {
      // Only the control socket's end is the end of the conversation: a peer that says CLOSE
      // there may shut its other sockets first, between frames.
      if (&s != &socks_[0] && !s.in_payload && s.hdr_got == 0) {
        close(s.fd);
        s.fd = -1;
        return moved;
      }
      return RemoteError(Who() + ": peer closed the connection");
    }
    if (r < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      return SystemError(Who() + ": recv");
    }
    moved = true;
    drained = static_cast<size_t>(r) < asked;
    budget -= static_cast<size_t>(r) < budget ? static_cast<size_t>(r) : budget;
  }
  return moved;
}

Result<bool> TcpConnection::Progress(FrameSink& sink) {
  if (closed_) return false;
  bool moved = false;
  for (Sock& s : socks_) {
    if (s.fd < 0) {
      if (!s.out.empty()) return RemoteError(Who() + ": peer closed a socket with data queued for it");
      continue;
    }
    if (!s.out.empty()) {
      Result<bool> w = WriteSome(s);
      if (!w.ok()) {
        // A peer that leaves says why first (CLOSE, with its error) and then its end goes away;
        // a write can meet the reset before that frame is read. Hand on what it sent first, so
        // the protocol learns the reason (rank 1 died), not only that a send failed.
        for (Sock& r : socks_)
          if (r.fd >= 0 && !closed_) (void)ReadSome(r, sink);
        return w.status();
      }
      moved = moved || *w;
    }
  }
  // What left goes first: the protocol must learn that a send left before it reads that the
  // peer closed.
  moved = ReportSent(sink) || moved;
  if (closed_) return true;
  // Small frames all come on the first socket; the others carry only bulk frames, which follow
  // a CTS of ours. Reading an idle socket costs a system call per pass (with two sockets a
  // third of an 8-byte all_reduce over loopback). With read hints (UseReadHints) a socket is
  // read only when the context saw it readable. Without them, or on a pass whose context asked
  // no poll, every socket is read, but while the peer owes no bulk bytes an idle bulk socket is
  // read only every 2nd, 4th, ... up to every 16th pass (every pass again once it has data, is
  // inside a frame, or bulk bytes are owed).
  const bool every = !hinted_ || all_readable_;
  all_readable_ = false;
  for (size_t i = 0; i < socks_.size(); ++i) {
    Sock& s = socks_[i];
    const bool marked = s.readable;
    s.readable = false;
    if (s.fd < 0) continue;
    if (!every) {
      if (!marked && s.rpos == s.rlen) continue;
      TUTTI_ASSIGN_OR_RETURN(bool r, ReadSome(s, sink, /*may_recv=*/marked));
      moved = moved || r;
      if (closed_) return true;
      continue;
    }
    if (i > 0 && s.skip > 0) {
      --s.skip;
      continue;
    }
    TUTTI_ASSIGN_OR_RETURN(bool r, ReadSome(s, sink));
    moved = moved || r;
    if (closed_) return true;
    if (i == 0) continue;
    if (r || s.in_payload || s.hdr_got > 0 || s.rpos < s.rlen || bulk_owed_ > 0) {
      s.idle_exp = 0;
    } else if (s.idle_exp < kMaxIdleExp) {
      ++s.idle_exp;
    }
    s.skip = (1u << s.idle_exp) - 1;
  }
  moved = ReportSent(sink) || moved;  // frames the sink queued meanwhile
  return moved;
}

void TcpConnection::AppendWaitFds(std::vector<int>* fds) const {
  for (const Sock& s : socks_)
    if (s.fd >= 0) fds->push_back(s.fd);
}

void TcpConnection::ReleaseBuffers() {
  for (Sock& s : socks_) {
    if (s.in_payload) s.dst = nullptr;
    size_t keep = !s.out.empty() && s.out.front().sent > 0 ? 1 : 0;
    while (s.out.size() > keep) {
      queued_bytes_ -= kFrameHeaderSize + s.out.back().h.payload_len;
      s.queued -= s.out.back().h.payload_len;
      s.out.pop_back();
    }
    if (keep) {
      Out& o = s.out.front();
      if (zeros_.size() < o.h.payload_len) zeros_.assign(o.h.payload_len, 0);
      o.payload = zeros_.data();
      o.cookie = 0;
    }
  }
}

void TcpConnection::Close() {
  if (closed_) return;
  closed_ = true;
  for (Sock& s : socks_) {
    if (s.fd >= 0) {
      // Closing a socket with unread bytes sends a reset and throws away what we queued but
      // the kernel has not sent yet, such as the CLOSE frame saying why we leave; so read
      // (without waiting) what has arrived first.
      char sink[16384];
      for (int i = 0; i < 4096 && recv(s.fd, sink, sizeof(sink), MSG_DONTWAIT) > 0; ++i) {
      }
      close(s.fd);
    }
    s.fd = -1;
    s.out.clear();
    s.queued = 0;
  }
  queued_bytes_ = 0;
}

}  // namespace tutti
