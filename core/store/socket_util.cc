#include "core/store/socket_util.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <climits>
#include <cmath>
#include <memory>

namespace tutti::sock {

namespace {

struct AddrInfoDeleter {
  void operator()(addrinfo* ai) const { freeaddrinfo(ai); }
};
using AddrInfoPtr = std::unique_ptr<addrinfo, AddrInfoDeleter>;

Result<AddrInfoPtr> Resolve(const std::string& host, int port, bool passive) {
  if (port < 0 || port > 65535) return InvalidArgument("port " + std::to_string(port) + " out of range");
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0);
  addrinfo* res = nullptr;
  std::string service = std::to_string(port);
  int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &res);
  if (rc != 0) {
    std::string why = rc == EAI_SYSTEM ? std::strerror(errno) : gai_strerror(rc);
    return InvalidArgument("cannot resolve host \"" + host + "\": " + why);
  }
  return AddrInfoPtr(res);
}

// poll() for events on fd until d; EINTR restarts with the time that is left.
Result<short> PollFd(int fd, short events, const Deadline& d) {
  while (true) {
    pollfd p{fd, events, 0};
    int rc = ::poll(&p, 1, d.PollMs());
    if (rc > 0) return p.revents;
    if (rc == 0) return short{0};
    if (errno != EINTR) return SystemError("poll");
  }
}

bool IsClosedErrno(int e) { return e == EPIPE || e == ECONNRESET || e == ENOTCONN; }

}  // namespace

Deadline Deadline::After(double seconds) {
  Deadline d;
  if (std::isinf(seconds) || std::isnan(seconds) || seconds > 1e9) return d;
  d.never_ = false;
  d.at_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                             std::chrono::duration<double>(seconds < 0 ? 0 : seconds));
  return d;
}

int Deadline::PollMs() const {
  if (never_) return -1;
  auto left = at_ - Clock::now();
  if (left <= Clock::duration::zero()) return 0;
  auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
  return ms > INT_MAX ? INT_MAX : static_cast<int>(ms);
}

std::string HostPort(const std::string& host, int port) {
  if (host.find(':') != std::string::npos) return "[" + host + "]:" + std::to_string(port);
  return host + ":" + std::to_string(port);
}

Result<int> ConnectOnce(const std::string& host, int port, const Deadline& d) {
  TUTTI_ASSIGN_OR_RETURN(AddrInfoPtr addrs, Resolve(host, port, /*passive=*/false));
  Status last = SystemError("connect", ECONNREFUSED);
  for (addrinfo* ai = addrs.get(); ai != nullptr; ai = ai->ai_next) {
    int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      last = SystemError("socket");
      continue;
    }
    int rc = ::connect(fd, ai->ai_addr, ai->ai_addrlen);
    if (rc != 0 && errno != EINPROGRESS && errno != EINTR) {
      last = SystemError("connect to " + HostPort(host, port));
      ::close(fd);
      continue;
    }
    if (rc != 0) {
      Result<short> ev = PollFd(fd, POLLOUT, d);
      if (!ev.ok() || *ev == 0) {
        last = ev.ok() ? TimeoutError("connect to " + HostPort(host, port) + " timed out")
                       : ev.status();
        ::close(fd);
        continue;
      }
      int err = 0;
      socklen_t len = sizeof(err);
      if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
      if (err != 0) {
        last = SystemError("connect to " + HostPort(host, port), err);
        ::close(fd);
        continue;
      }
    }
    return fd;
  }
  return last;
}

Result<int> Listen(const std::string& host, int port, int backlog) {
  std::string h = host.empty() ? "0.0.0.0" : host;
  TUTTI_ASSIGN_OR_RETURN(AddrInfoPtr addrs, Resolve(h, port, /*passive=*/true));
  Status last = InvalidArgument("no address to listen on for " + HostPort(h, port));
  for (addrinfo* ai = addrs.get(); ai != nullptr; ai = ai->ai_next) {
    int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      last = SystemError("socket");
      continue;
    }
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (::bind(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
      last = SystemError("bind " + HostPort(h, port));
      ::close(fd);
      continue;
    }
    if (::listen(fd, backlog) != 0) {
      last = SystemError("listen on " + HostPort(h, port));
      ::close(fd);
      continue;
    }
    return fd;
  }
  return last;
}

Result<int> LocalPort(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0)
    return SystemError("getsockname");
  if (ss.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
  if (ss.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
  return InternalError("listening socket of unknown family");
}

std::string PeerName(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "?";
  char ip[INET6_ADDRSTRLEN] = {};
  if (ss.ss_family == AF_INET) {
    auto* a = reinterpret_cast<sockaddr_in*>(&ss);
    ::inet_ntop(AF_INET, &a->sin_addr, ip, sizeof(ip));
    return HostPort(ip, ntohs(a->sin_port));
  }
  if (ss.ss_family == AF_INET6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
    ::inet_ntop(AF_INET6, &a->sin6_addr, ip, sizeof(ip));
    return HostPort(ip, ntohs(a->sin6_port));
  }
  return "?";
}

Status SetNoDelay(int fd) {
  int one = 1;
  if (::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0)
    return SystemError("setsockopt(TCP_NODELAY)");
  return OkStatus();
}

Status WriteFully(int fd, const char* data, size_t n, const Deadline& d) {
  size_t done = 0;
  while (done < n) {
    ssize_t w = ::send(fd, data + done, n - done, MSG_NOSIGNAL);
    if (w > 0) {
      done += static_cast<size_t>(w);
      continue;
    }
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      TUTTI_ASSIGN_OR_RETURN(short ev, PollFd(fd, POLLOUT, d));
      if (ev == 0) return TimeoutError("send timed out");
      continue;  // POLLERR/POLLHUP: the next send reports the error
    }
    if (w < 0 && IsClosedErrno(errno)) return RemoteError("peer closed the connection");
    return SystemError("send");
  }
  return OkStatus();
}

Status ReadFully(int fd, char* data, size_t n, const Deadline& d) {
  size_t done = 0;
  while (done < n) {
    ssize_t r = ::recv(fd, data + done, n - done, 0);
    if (r > 0) {
      done += static_cast<size_t>(r);
      continue;
    }
    if (r == 0) return RemoteError("peer closed the connection");
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      TUTTI_ASSIGN_OR_RETURN(short ev, PollFd(fd, POLLIN, d));
      if (ev == 0) return TimeoutError("receive timed out");
      continue;
    }
    if (IsClosedErrno(errno)) return RemoteError("peer closed the connection");
    return SystemError("recv");
  }
  return OkStatus();
}

Result<bool> WaitReadable(int fd, const Deadline& d) {
  TUTTI_ASSIGN_OR_RETURN(short ev, PollFd(fd, POLLIN, d));
  return ev != 0;
}

}  // namespace tutti::sock
