// Small socket helpers shared by the TCP transport and the store: addresses, interface choice
// (NCCL_SOCKET_IFNAME syntax), connect with a deadline, full reads/writes with a deadline.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <string>
#include <vector>

#include "core/base/status.h"

namespace tutti {

using Clock = std::chrono::steady_clock;

// Seconds from now as a deadline (timeout_s < 0, NaN or > 1e8: effectively never).
Clock::time_point DeadlineIn(double timeout_s);
// Milliseconds left until the deadline for poll(), at least 0, at most max_ms.
int MsLeft(Clock::time_point deadline, int max_ms = 1 << 30);

struct Interface {
  std::string name;
  std::string address;  // numeric IPv4 or IPv6
  bool loopback = false;
};

// Interfaces that are up and have an address.
Result<std::vector<Interface>> ListInterfaces();
// Filters by an NCCL_SOCKET_IFNAME-style spec: "eth,ib" prefixes, "^docker" excluded prefixes,
// "=eth0" exact names (also "^=eth0"). An empty spec picks non-loopback interfaces first, then
// loopback.
std::vector<Interface> SelectInterfaces(const std::vector<Interface>& all, const std::string& spec);

// "host:port" <-> parts; IPv6 in brackets.
std::string JoinHostPort(const std::string& host, int port);
Result<std::pair<std::string, int>> SplitHostPort(const std::string& text);

// A blocking TCP listening socket on host:port (port 0: any; port outside [0, 65535]:
// kInvalidArgument). Returns the fd; *bound_port gets the port. A host that does not resolve, or
// has no address to listen on, is kUnavailable.
Result<int> ListenTcp(const std::string& host, int port, int* bound_port, int backlog = 1024);
// One attempt to connect to each address of host:port, each bounded by the deadline. Returns the
// connected fd, non-blocking. Errors: the last address's failure (refused or timed out:
// kSystemError), or kUnavailable if host does not resolve.
Result<int> ConnectTcpOnce(const std::string& host, int port, Clock::time_point deadline);
// Connects to host:port, retrying refused connections until the deadline. Blocking fd returned.
Result<int> ConnectTcp(const std::string& host, int port, Clock::time_point deadline);

// Blocking-with-deadline full write/read on a (possibly non-blocking) fd; retries on EINTR,
// handles partial transfers, never raises SIGPIPE. A closed or reset connection is kRemoteError;
// running out of time is kTimeout; anything else kSystemError.
Status WriteFull(int fd, const void* buf, size_t n, Clock::time_point deadline);
Status ReadFull(int fd, void* buf, size_t n, Clock::time_point deadline);
// Waits until fd is readable (or hung up) or the deadline passes; true if readable.
Result<bool> WaitReadable(int fd, Clock::time_point deadline);

// The local port of a bound socket.
Result<int> LocalPort(int fd);
// "ip:port" of the peer (IPv6 in brackets), or "?" if unknown.
std::string PeerName(int fd);

Status SetNonBlocking(int fd, bool on);
Status SetNoDelay(int fd);
// TCP_NODELAY, keepalive, TCP_USER_TIMEOUT (ms, 0 = kernel default) and buffer sizes (0 = keep).
void TuneSocket(int fd, int user_timeout_ms, int bufsize);

}  // namespace tutti
