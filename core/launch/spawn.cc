#include "core/launch/spawn.h"

#include <fcntl.h>
#include <netdb.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <iostream>

#include "core/launch/child_procs.h"
#include "core/base/logging.h"

namespace tutti {

namespace {

constexpr double kGraceSeconds = 3.0;

std::string Seconds(double s) {
  char buf[32];
  snprintf(buf, sizeof(buf), "%g s", s);
  return buf;
}

// waitpid needs SIGCHLD not to be ignored; restores the caller's setting when done.
class SigchldDefault {
 public:
  SigchldDefault() {
    struct sigaction dfl = {};
    dfl.sa_handler = SIG_DFL;
    sigaction(SIGCHLD, nullptr, &old_);
    changed_ = old_.sa_handler == SIG_IGN && sigaction(SIGCHLD, &dfl, nullptr) == 0;
  }
  ~SigchldDefault() {
    if (changed_) sigaction(SIGCHLD, &old_, nullptr);
  }

 private:
  struct sigaction old_ = {};
  bool changed_ = false;
};

// Runs in the forked child; never returns.
[[noreturn]] void RunChild(int rank, int nprocs, pid_t parent, const std::string& addr, int port,
                           const std::string& secret, const std::function<int(int)>& fn) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(1);  // the parent died before prctl
  setpgid(0, 0);
  setenv("RANK", std::to_string(rank).c_str(), 1);
  setenv("WORLD_SIZE", std::to_string(nprocs).c_str(), 1);
  setenv("LOCAL_RANK", std::to_string(rank).c_str(), 1);
  setenv("LOCAL_WORLD_SIZE", std::to_string(nprocs).c_str(), 1);
  setenv("MASTER_ADDR", addr.c_str(), 1);
  setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
  setenv("TUTTI_SECRET", secret.c_str(), 1);
  SetLogRank(rank);
  int rc = 1;
  try {
    rc = fn(rank);
  } catch (const std::exception& e) {
    fprintf(stderr, "spawn: rank %d: uncaught exception: %s\n", rank, e.what());
  } catch (...) {
    fprintf(stderr, "spawn: rank %d: uncaught exception of unknown type\n", rank);
  }
  std::cout.flush();
  std::cerr.flush();
  fflush(nullptr);
  _exit(rc >= 0 && rc <= 255 ? rc : 1);
}

}  // namespace

Result<std::string> RandomSecret(int bytes) {
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return SystemError("open /dev/urandom");
  std::string raw(static_cast<size_t>(bytes), '\0');
  size_t got = 0;
  while (got < raw.size()) {
    ssize_t n = read(fd, raw.data() + got, raw.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      Status st = SystemError("read /dev/urandom", n < 0 ? errno : EIO);
      close(fd);
      return st;
    }
    got += static_cast<size_t>(n);
  }
  close(fd);
  static const char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned char c : raw) {
    hex += kHex[c >> 4];
    hex += kHex[c & 15];
  }
  return hex;
}

Result<int> PickFreePort(const std::string& addr) {
  struct addrinfo hints = {};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  struct addrinfo* res = nullptr;
  int rc = getaddrinfo(addr.c_str(), "0", &hints, &res);
  if (rc != 0)
    return InvalidArgument("cannot resolve \"" + addr + "\": " + gai_strerror(rc));
  Status last = UnavailableError("no address for \"" + addr + "\"");
  int port = -1;
  for (struct addrinfo* ai = res; ai != nullptr && port < 0; ai = ai->ai_next) {
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
      last = SystemError("socket for " + addr);
      continue;
    }
    struct sockaddr_storage ss = {};
    socklen_t len = sizeof(ss);
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
      last = SystemError("bind to " + addr + " port 0");
    } else if (getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) {
      last = SystemError("getsockname on " + addr);
    } else if (ss.ss_family == AF_INET) {
      port = ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
    } else {
      port = ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
    }
    close(fd);
  }
  freeaddrinfo(res);
  if (port < 0) return last;
  return port;
}

Status Spawn(int nprocs, const std::function<int(int rank)>& fn, const SpawnOptions& opts) {
  using Clock = std::chrono::steady_clock;
  if (nprocs <= 0)
    return InvalidArgument("spawn: nprocs must be at least 1, got " + std::to_string(nprocs));
  if (!(opts.timeout_s >= 0))
    return InvalidArgument("spawn: timeout_s must be >= 0, got " + std::to_string(opts.timeout_s));
  if (opts.master_port < 0 || opts.master_port > 65535)
    return InvalidArgument("spawn: master_port " + std::to_string(opts.master_port) +
                           " is out of range [0, 65535]");
  int port = opts.master_port;
  if (port == 0) {
    TUTTI_ASSIGN_OR_RETURN(port, PickFreePort(opts.master_addr));
  }
  std::string secret = opts.secret;
  if (secret.empty()) {
    TUTTI_ASSIGN_OR_RETURN(secret, RandomSecret());
  }
  TUTTI_LOG(Info, Launch, "spawn: %d ranks, store at %s:%d", nprocs, opts.master_addr.c_str(),
            port);

  SigchldDefault sigchld;
  ChildSet children;
  const pid_t parent = getpid();
  std::cout.flush();
  fflush(nullptr);  // or the children would print the parent's buffered output again
  for (int rank = 0; rank < nprocs; ++rank) {
    pid_t pid = fork();
    if (pid < 0) {
      Status st = SystemError("spawn: fork for rank " + std::to_string(rank));
      children.Terminate(kGraceSeconds);
      return st;
    }
    if (pid == 0) RunChild(rank, nprocs, parent, opts.master_addr, port, secret, fn);
    children.Add(rank, pid);
  }

  const auto start = Clock::now();
  int sleep_ms = 1;
  while (children.running() > 0) {
    for (const ChildExit& e : children.Reap()) {
      if (e.ok()) continue;
      TUTTI_LOG(Info, Launch, "spawn: rank %d %s; stopping the others", e.rank,
                e.Describe().c_str());
      children.Terminate(kGraceSeconds);
      return RemoteError("spawn: rank " + std::to_string(e.rank) + " " + e.Describe());
    }
    if (children.running() == 0) break;
    if (opts.timeout_s > 0 &&
        Clock::now() - start >= std::chrono::duration<double>(opts.timeout_s)) {
      size_t left = children.running();
      children.Terminate(kGraceSeconds);
      return TimeoutError("spawn: " + std::to_string(left) + " of " + std::to_string(nprocs) +
                          " ranks still running after " + Seconds(opts.timeout_s) +
                          "; killed them");
    }
    SleepMs(sleep_ms);
    sleep_ms = std::min(sleep_ms * 2, 10);
  }
  return OkStatus();
}

}  // namespace tutti
