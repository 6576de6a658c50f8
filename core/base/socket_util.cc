#include "core/base/socket_util.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <thread>

#include "core/base/deadline.h"

namespace tutti {

Clock::time_point DeadlineIn(double timeout_s) { return Clock::now() + WaitDuration(timeout_s); }

int MsLeft(Clock::time_point deadline, int max_ms) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  if (left < 0) return 0;
  return left > max_ms ? max_ms : static_cast<int>(left);
}

Result<std::vector<Interface>> ListInterfaces() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return SystemError("getifaddrs");
  std::vector<Interface> out;
  for (ifaddrs* a = list; a != nullptr; a = a->ifa_next) {
    if (a->ifa_addr == nullptr || !(a->ifa_flags & IFF_UP)) continue;
    int fam = a->ifa_addr->sa_family;
    if (fam != AF_INET && fam != AF_INET6) continue;
    char buf[INET6_ADDRSTRLEN] = {};
    const void* src = fam == AF_INET
                          ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(a->ifa_addr)->sin_addr)
                          : static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(a->ifa_addr)->sin6_addr);
    inet_ntop(fam, src, buf, sizeof(buf));
    if (fam == AF_INET6 && std::strncmp(buf, "fe80", 4) == 0) continue;  // link-local needs scope
    out.push_back({a->ifa_name, buf, (a->ifa_flags & IFF_LOOPBACK) != 0});
  }
  freeifaddrs(list);
  // IPv4 before IPv6, stable otherwise.
  std::stable_sort(out.begin(), out.end(), [](const Interface& x, const Interface& y) {
    return x.address.find(':') == std::string::npos && y.address.find(':') != std::string::npos;
  });
  return out;
}

std::vector<Interface> SelectInterfaces(const std::vector<Interface>& all, const std::string& spec) {
  std::vector<Interface> out;
  if (spec.empty()) {
    for (const auto& i : all)
      if (!i.loopback) out.push_back(i);
    for (const auto& i : all)
      if (i.loopback) out.push_back(i);
    return out;
  }
  std::string s = spec;
  bool exclude = s[0] == '^';
  if (exclude) s = s.substr(1);
  bool exact = !s.empty() && s[0] == '=';
  if (exact) s = s.substr(1);
  std::vector<std::string> items;
  size_t pos = 0;
  while (true) {
    size_t c = s.find(',', pos);
    std::string item = s.substr(pos, c == std::string::npos ? std::string::npos : c - pos);
    if (!item.empty()) items.push_back(item);
    if (c == std::string::npos) break;
    pos = c + 1;
  }
  for (const auto& i : all) {
    bool hit = false;
    for (const auto& item : items)
      hit = hit || (exact ? i.name == item : i.name.compare(0, item.size(), item) == 0);
    if (hit != exclude) out.push_back(i);
  }
  return out;
}

std::string JoinHostPort(const std::string& host, int port) {
  if (host.find(':') != std::string::npos) return "[" + host + "]:" + std::to_string(port);
  return host + ":" + std::to_string(port);
}

Result<std::pair<std::string, int>> SplitHostPort(const std::string& text) {
  size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 >= text.size())
    return ProtocolError("malformed address \"" + text + "\"");
  std::string host = text.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  char* end = nullptr;
  long port = std::strtol(text.c_str() + colon + 1, &end, 10);
  if (*end != '\0' || port <= 0 || port > 65535) return ProtocolError("malformed port in \"" + text + "\"");
  return std::make_pair(host, static_cast<int>(port));
}

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
  std::string p = std::to_string(port);
  int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), p.c_str(), &hints, &res);
  if (rc != 0) {
    std::string why = rc == EAI_SYSTEM ? std::strerror(errno) : gai_strerror(rc);
    return UnavailableError("cannot resolve \"" + host + "\": " + why);
  }
  return AddrInfoPtr(res);
}

// poll() for events on fd until some arrive (their revents) or the deadline passes (0). EINTR and
// early wake-ups poll again with the time that is left.
Result<short> PollUntil(int fd, short events, Clock::time_point deadline) {
  while (true) {
    pollfd p{fd, events, 0};
    int rc = poll(&p, 1, MsLeft(deadline));
    if (rc > 0) return p.revents;
    if (rc < 0 && errno != EINTR) return SystemError("poll");
    if (rc == 0 && Clock::now() >= deadline) return short{0};
  }
}

// A failed send/recv: the peer closing or resetting the connection is kRemoteError.
Status IoError(const char* what) {
  int e = errno;
  if (e == EPIPE || e == ECONNRESET || e == ENOTCONN)
    return RemoteError(std::string(what) + ": " + std::strerror(e));
  return SystemError(what, e);
}

}  // namespace

Result<int> ListenTcp(const std::string& host, int port, int* bound_port, int backlog) {
  TUTTI_ASSIGN_OR_RETURN(AddrInfoPtr res, Resolve(host, port, true));
  Status last = UnavailableError("no address to listen on for \"" + host + "\"");
  for (addrinfo* a = res.get(); a != nullptr; a = a->ai_next) {
    int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      last = SystemError("socket");
      continue;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, a->ai_addr, a->ai_addrlen) != 0 || listen(fd, backlog) != 0) {
      last = SystemError("bind/listen on " + JoinHostPort(host, port));
      close(fd);
      continue;
    }
    Result<int> bound = LocalPort(fd);
    if (!bound.ok()) {
      close(fd);
      return bound.status();
    }
    *bound_port = *bound;
    return fd;
  }
  return last;
}

Result<int> ConnectTcpOnce(const std::string& host, int port, Clock::time_point deadline) {
  TUTTI_ASSIGN_OR_RETURN(AddrInfoPtr res, Resolve(host, port, false));
  Status last = SystemError("connect to " + JoinHostPort(host, port), ECONNREFUSED);
  for (addrinfo* a = res.get(); a != nullptr; a = a->ai_next) {
    int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) {
      last = SystemError("socket");
      continue;
    }
    int err = connect(fd, a->ai_addr, a->ai_addrlen) == 0 ? 0 : errno;
    if (err == EINPROGRESS || err == EINTR) {  // EINTR: the connect goes on asynchronously
      Result<short> ev = PollUntil(fd, POLLOUT, deadline);
      if (!ev.ok()) {
        last = ev.status();
        close(fd);
        continue;
      }
      err = ETIMEDOUT;
      if (*ev != 0) {
        socklen_t len = sizeof(err);
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
      }
    }
    if (err == 0) return fd;
    last = SystemError("connect to " + JoinHostPort(host, port), err);
    close(fd);
  }
  return last;
}

Result<int> ConnectTcp(const std::string& host, int port, Clock::time_point deadline) {
  int backoff_ms = 1;
  while (true) {
    Result<int> fd = ConnectTcpOnce(host, port, deadline);
    if (fd.ok()) {
      (void)SetNonBlocking(*fd, false);
      return fd;
    }
    if (Clock::now() >= deadline) return fd.status().WithContext("gave up");
    std::this_thread::sleep_for(std::chrono::milliseconds(MsLeft(deadline, backoff_ms)));
    backoff_ms = backoff_ms * 2 > 200 ? 200 : backoff_ms * 2;
  }
}

Status WriteFull(int fd, const void* buf, size_t n, Clock::time_point deadline) {
  const char* p = static_cast<const char*>(buf);
  while (n > 0) {
    ssize_t w = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w > 0) {
      p += w;
      n -= static_cast<size_t>(w);
      continue;
    }
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      TUTTI_ASSIGN_OR_RETURN(short ev, PollUntil(fd, POLLOUT, deadline));
      if (ev == 0) return TimeoutError("write timed out");
      continue;  // POLLERR/POLLHUP: the next send reports the error
    }
    return IoError("write");
  }
  return OkStatus();
}

Status ReadFull(int fd, void* buf, size_t n, Clock::time_point deadline) {
  char* p = static_cast<char*>(buf);
  while (n > 0) {
    ssize_t r = recv(fd, p, n, MSG_DONTWAIT);
    if (r > 0) {
      p += r;
      n -= static_cast<size_t>(r);
      continue;
    }
    if (r == 0) return RemoteError("connection closed by peer");
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      TUTTI_ASSIGN_OR_RETURN(short ev, PollUntil(fd, POLLIN, deadline));
      if (ev == 0) return TimeoutError("read timed out");
      continue;
    }
    return IoError("read");
  }
  return OkStatus();
}

Result<bool> WaitReadable(int fd, Clock::time_point deadline) {
  TUTTI_ASSIGN_OR_RETURN(short ev, PollUntil(fd, POLLIN, deadline));
  return ev != 0;
}

Result<int> LocalPort(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return SystemError("getsockname");
  if (ss.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
  if (ss.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
  return InternalError("socket of unknown address family");
}

std::string PeerName(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "?";
  char ip[INET6_ADDRSTRLEN] = {};
  if (ss.ss_family == AF_INET) {
    auto* a = reinterpret_cast<sockaddr_in*>(&ss);
    inet_ntop(AF_INET, &a->sin_addr, ip, sizeof(ip));
    return JoinHostPort(ip, ntohs(a->sin_port));
  }
  if (ss.ss_family == AF_INET6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
    inet_ntop(AF_INET6, &a->sin6_addr, ip, sizeof(ip));
    return JoinHostPort(ip, ntohs(a->sin6_port));
  }
  return "?";
}

Status SetNonBlocking(int fd, bool on) {
  int flags = fcntl(fd, F_GETFL, 0);
  if (flags < 0) return SystemError("fcntl(F_GETFL)");
  flags = on ? (flags | O_NONBLOCK) : (flags & ~O_NONBLOCK);
  if (fcntl(fd, F_SETFL, flags) != 0) return SystemError("fcntl(F_SETFL)");
  return OkStatus();
}

Status SetNoDelay(int fd) {
  int one = 1;
  if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0)
    return SystemError("setsockopt(TCP_NODELAY)");
  return OkStatus();
}

void TuneSocket(int fd, int user_timeout_ms, int bufsize) {
  SetNoDelay(fd).IgnoreError();
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
  int idle = 10, intvl = 5, cnt = 3;
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
  if (user_timeout_ms > 0)
    setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout_ms, sizeof(user_timeout_ms));
  if (bufsize > 0) {
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bufsize, sizeof(bufsize));
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bufsize, sizeof(bufsize));
  }
}

}  // namespace tutti
