// RunLauncher: starts the ranks, relays their output, forwards signals, stops them all when one
// fails. Single-threaded: one poll() loop over a self-pipe for signals and every output pipe.
#include "core/launch/launcher.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <optional>

#include "core/launch/child_procs.h"
#include "core/launch/line_relay.h"
#include "core/base/logging.h"

namespace tutti {

namespace {

using Clock = std::chrono::steady_clock;

constexpr double kGraceSeconds = 3.0;
constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP};
constexpr int kDrainIdleMs = 1000;  // after the last rank exits, wait this long for output

int g_signal_pipe = -1;  // write end of the self-pipe; one RunLauncher at a time

void OnSignal(int sig) {
  int saved = errno;
  unsigned char b = static_cast<unsigned char>(sig);
  if (g_signal_pipe >= 0 && write(g_signal_pipe, &b, 1) < 0) {
  }  // a full pipe already holds a wake-up
  errno = saved;
}

// Prints a tuttirun message on stderr with one write (no stdio buffer to mix with ranks' lines).
__attribute__((format(printf, 1, 2))) void Say(const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
  va_end(ap);
  n = std::clamp(n, 0, static_cast<int>(sizeof(buf)) - 2);
  buf[n] = '\n';
  WriteAll(2, buf, static_cast<size_t>(n) + 1);
}

struct Stream {
  int fd;
  LineRelay relay;
};

class Job {
 public:
  explicit Job(LauncherOptions opts) : o_(std::move(opts)) {}
  ~Job();
  int Run();

 private:
  Status InstallSignals();
  // Forks and execs one rank; false (after saying why) when PROG could not be run.
  bool Start(int local);
  [[noreturn]] void ExecChild(int rank, int local, pid_t parent, int out_w, int err_w,
                              int exec_w);
  // Waits up to timeout_ms for output or a signal and handles them; true when it read output.
  bool Pump(int timeout_ms);
  void HandleSignals();
  void Stop();
  void Drain();

  LauncherOptions o_;
  ChildSet children_;
  std::vector<Stream> streams_;
  int sig_r_ = -1, sig_w_ = -1;
  struct sigaction old_forwarded_[std::size(kForwarded)] = {};
  struct sigaction old_sigchld_ = {}, old_sigpipe_ = {};
  bool installed_ = false;
  std::optional<ChildExit> failure_;
  int got_signal_ = 0;
  bool timed_out_ = false;
};

Job::~Job() {
  if (installed_) {
    for (size_t i = 0; i < std::size(kForwarded); ++i)
      sigaction(kForwarded[i], &old_forwarded_[i], nullptr);
    sigaction(SIGCHLD, &old_sigchld_, nullptr);
    sigaction(SIGPIPE, &old_sigpipe_, nullptr);
    g_signal_pipe = -1;
  }
  for (Stream& s : streams_) close(s.fd);
  if (sig_r_ >= 0) close(sig_r_);
  if (sig_w_ >= 0) close(sig_w_);
}

Status Job::InstallSignals() {
  int p[2];
  if (pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0) return SystemError("pipe");
  sig_r_ = p[0];
  sig_w_ = p[1];
  g_signal_pipe = sig_w_;
  struct sigaction sa = {};
  sa.sa_handler = OnSignal;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < std::size(kForwarded); ++i) {
    sigaction(kForwarded[i], nullptr, &old_forwarded_[i]);
    // Ignored (nohup, a background job): stay ignored, here and in the ranks.
    if (old_forwarded_[i].sa_handler != SIG_IGN) sigaction(kForwarded[i], &sa, nullptr);
  }
  sa.sa_flags |= SA_NOCLDSTOP;
  sigaction(SIGCHLD, &sa, &old_sigchld_);  // wakes poll() when a rank exits
  struct sigaction ign = {};
  ign.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ign, &old_sigpipe_);  // a closed stdout must not kill us mid-job
  installed_ = true;
  return OkStatus();
}

void Job::ExecChild(int rank, int local, pid_t parent, int out_w, int err_w, int exec_w) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(127);
  setpgid(0, 0);
  for (size_t i = 0; i < std::size(kForwarded); ++i)
    signal(kForwarded[i], old_forwarded_[i].sa_handler == SIG_IGN ? SIG_IGN : SIG_DFL);
  signal(SIGCHLD, SIG_DFL);
  signal(SIGPIPE, old_sigpipe_.sa_handler == SIG_IGN ? SIG_IGN : SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  if (out_w >= 0) dup2(out_w, 1);
  if (err_w >= 0) dup2(err_w, 2);
  if (isatty(0)) {  // a background process group reading the terminal would stop (SIGTTIN)
    int null_fd = open("/dev/null", O_RDONLY);
    if (null_fd >= 0) dup2(null_fd, 0);
  }
  setenv("RANK", std::to_string(rank).c_str(), 1);
  setenv("WORLD_SIZE", std::to_string(o_.nnodes * o_.nproc_per_node).c_str(), 1);
  setenv("LOCAL_RANK", std::to_string(local).c_str(), 1);
  setenv("LOCAL_WORLD_SIZE", std::to_string(o_.nproc_per_node).c_str(), 1);
  setenv("MASTER_ADDR", o_.master_addr.c_str(), 1);
  setenv("MASTER_PORT", std::to_string(o_.master_port).c_str(), 1);
  setenv("TUTTI_SECRET", o_.secret.c_str(), 1);
  std::vector<char*> argv;
  for (std::string& a : o_.command) argv.push_back(a.data());
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());
  int err = errno;
  if (write(exec_w, &err, sizeof(err)) < 0) {
  }
  _exit(127);
}

bool Job::Start(int local) {
  const int rank = o_.node_rank * o_.nproc_per_node + local;
  int out[2] = {-1, -1}, err[2] = {-1, -1}, ex[2] = {-1, -1};
  bool ok = pipe2(ex, O_CLOEXEC) == 0;
  if (ok && o_.prefix) ok = pipe2(out, O_CLOEXEC) == 0 && pipe2(err, O_CLOEXEC) == 0;
  sigset_t block, old;
  sigemptyset(&block);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGCHLD}) sigaddset(&block, sig);
  sigprocmask(SIG_BLOCK, &block, &old);  // the child must not run our handlers
  const pid_t parent = getpid();
  pid_t pid = ok ? fork() : -1;
  if (pid == 0) ExecChild(rank, local, parent, out[1], err[1], ex[1]);
  int fork_errno = errno;
  sigprocmask(SIG_SETMASK, &old, nullptr);
  for (int fd : {out[1], err[1], ex[1]})
    if (fd >= 0) close(fd);
  if (pid < 0) {
    for (int fd : {out[0], err[0], ex[0]})
      if (fd >= 0) close(fd);
    Say("tuttirun: cannot start rank %d: %s", rank, strerror(fork_errno));
    return false;
  }
  children_.Add(rank, pid);
  std::string prefix = "[rank " + std::to_string(rank) + "] ";
  if (o_.prefix) {
    fcntl(out[0], F_SETFL, O_NONBLOCK);
    fcntl(err[0], F_SETFL, O_NONBLOCK);
    streams_.push_back({out[0], LineRelay(prefix, 1)});
    streams_.push_back({err[0], LineRelay(prefix, 2)});
  }
  int exec_errno = 0;
  ssize_t n;
  while ((n = read(ex[0], &exec_errno, sizeof(exec_errno))) < 0 && errno == EINTR) {
  }
  close(ex[0]);
  if (n == static_cast<ssize_t>(sizeof(exec_errno))) {
    Say("tuttirun: cannot run %s: %s", o_.command[0].c_str(), strerror(exec_errno));
    return false;
  }
  TUTTI_LOG(Info, Launch, "started rank %d as pid %d", rank, pid);
  return true;
}

bool Job::Pump(int timeout_ms) {
  std::vector<struct pollfd> fds;
  fds.push_back({sig_r_, POLLIN, 0});
  for (const Stream& s : streams_) fds.push_back({s.fd, POLLIN, 0});
  int n = poll(fds.data(), fds.size(), std::max(timeout_ms, 0));
  if (n <= 0) return false;
  if (fds[0].revents != 0) HandleSignals();
  bool got_output = false;
  char buf[65536];
  for (size_t i = 1; i < fds.size(); ++i) {
    if (fds[i].revents == 0) continue;
    Stream& s = streams_[i - 1];
    ssize_t r = read(s.fd, buf, sizeof(buf));
    if (r > 0) {
      s.relay.Feed(buf, static_cast<size_t>(r));
      got_output = true;
    } else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
      s.relay.Flush();
      close(s.fd);
      s.fd = -1;
    }
  }
  streams_.erase(std::remove_if(streams_.begin(), streams_.end(),
                                [](const Stream& s) { return s.fd < 0; }),
                 streams_.end());
  return got_output;
}

void Job::HandleSignals() {
  unsigned char sigs[64];
  ssize_t n;
  while ((n = read(sig_r_, sigs, sizeof(sigs))) > 0) {
    for (ssize_t i = 0; i < n; ++i) {
      int sig = sigs[i];
      if (sig == SIGCHLD) continue;  // the main loop reaps
      Say("tuttirun: got signal %d (%s); forwarding it to %zu ranks", sig, strsignal(sig),
          children_.running());
      if (got_signal_ == 0) got_signal_ = sig;
      children_.Signal(sig);
    }
  }
}

void Job::Stop() {
  for (const ChildExit& e : children_.Terminate(kGraceSeconds, [this](int ms) { Pump(ms); }))
    TUTTI_LOG(Info, Launch, "rank %d (pid %d) %s", e.rank, e.pid, e.Describe().c_str());
}

void Job::Drain() {
  auto idle_since = Clock::now();
  while (!streams_.empty() &&
         Clock::now() - idle_since < std::chrono::milliseconds(kDrainIdleMs)) {
    if (Pump(50)) idle_since = Clock::now();
  }
  for (Stream& s : streams_) {  // held open by something the rank left running
    s.relay.Flush();
    close(s.fd);
  }
  streams_.clear();
}

int Job::Run() {
  if (Status st = ResolveLauncherDefaults(&o_); !st.ok()) {
    Say("tuttirun: %s", st.message().c_str());
    return 2;
  }
  if (Status st = InstallSignals(); !st.ok()) {
    Say("tuttirun: %s", st.message().c_str());
    return 1;
  }
  TUTTI_LOG(Info, Launch, "tuttirun: ranks %d..%d of %d, store at %s:%d",
            o_.node_rank * o_.nproc_per_node, (o_.node_rank + 1) * o_.nproc_per_node - 1,
            o_.nnodes * o_.nproc_per_node, o_.master_addr.c_str(), o_.master_port);
  fflush(nullptr);
  for (int local = 0; local < o_.nproc_per_node && got_signal_ == 0; ++local) {
    if (!Start(local)) {
      Stop();
      Drain();
      return 127;
    }
    Pump(0);
  }
  const auto deadline = Clock::now() + std::chrono::duration<double>(o_.timeout_s);
  while (children_.running() > 0) {
    int wait_ms = 100;
    if (o_.timeout_s > 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      wait_ms = static_cast<int>(std::clamp<int64_t>(left.count() + 1, 0, wait_ms));
    }
    Pump(wait_ms);
    for (const ChildExit& e : children_.Reap()) {
      if (e.ok() || failure_) {
        TUTTI_LOG(Info, Launch, "rank %d (pid %d) %s", e.rank, e.pid, e.Describe().c_str());
        continue;
      }
      failure_ = e;
      Say("tuttirun: rank %d (pid %d) %s%s", e.rank, e.pid, e.Describe().c_str(),
          children_.running() > 0 ? "; stopping the other ranks" : "");
    }
    if (failure_) {
      Stop();
    } else if (o_.timeout_s > 0 && Clock::now() >= deadline && children_.running() > 0) {
      Say("tuttirun: the job did not finish within %g s; stopping %zu ranks", o_.timeout_s,
          children_.running());
      timed_out_ = true;
      Stop();
    }
  }
  Drain();
  if (failure_) return failure_->ShellCode();
  if (timed_out_) return 124;
  if (got_signal_ != 0) return 128 + got_signal_;
  return 0;
}

}  // namespace

int RunLauncher(LauncherOptions opts) {
  Job job(std::move(opts));
  return job.Run();
}

}  // namespace tutti
