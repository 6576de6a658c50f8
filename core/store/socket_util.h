// Small TCP helpers for the store: deadlines, connect with a deadline, read/write fully.
// Every socket made here is non-blocking and close-on-exec; the I/O helpers poll until the
// deadline, retry on EINTR and handle partial transfers. Writes never raise SIGPIPE.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "core/status.h"

namespace tutti::sock {

class Deadline {
 public:
  using Clock = std::chrono::steady_clock;
  // seconds may be infinity (or huge): never expires.
  static Deadline After(double seconds);
  static Deadline Never() { return Deadline(); }
  bool never() const { return never_; }
  bool expired() const { return !never_ && Clock::now() >= at_; }
  // Milliseconds left for poll(): -1 if never, 0 if expired, rounded up otherwise.
  int PollMs() const;
  Clock::time_point at() const { return at_; }

 private:
  bool never_ = true;
  Clock::time_point at_{};
};

// "host:port", with brackets around an IPv6 address.
std::string HostPort(const std::string& host, int port);

// One attempt to connect to each address of host:port (getaddrinfo), each bounded by d.
// Returns the connected non-blocking fd. Errors: kTimeout, kSystemError (e.g. refused),
// kInvalidArgument (a host name that does not resolve).
Result<int> ConnectOnce(const std::string& host, int port, const Deadline& d);

// A non-blocking listening socket on host:port ("" = all IPv4 interfaces; port 0 = any).
Result<int> Listen(const std::string& host, int port, int backlog);
Result<int> LocalPort(int fd);
// "ip:port" of the peer, or "?" if unknown.
std::string PeerName(int fd);
Status SetNoDelay(int fd);

// Write or read exactly n bytes. A closed or reset connection is kRemoteError ("peer closed the
// connection"); running out of time is kTimeout; anything else kSystemError.
Status WriteFully(int fd, const char* data, size_t n, const Deadline& d);
Status ReadFully(int fd, char* data, size_t n, const Deadline& d);

// Waits until fd is readable (or hung up) or d expires; true if readable.
Result<bool> WaitReadable(int fd, const Deadline& d);

}  // namespace tutti::sock
