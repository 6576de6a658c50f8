#include "core/launch/child_procs.h"

#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "core/base/logging.h"

namespace tutti {

bool ChildExit::ok() const { return WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0; }
bool ChildExit::signaled() const { return WIFSIGNALED(wait_status); }
int ChildExit::code() const {
  return signaled() ? WTERMSIG(wait_status) : WEXITSTATUS(wait_status);
}
int ChildExit::ShellCode() const { return signaled() ? 128 + code() : code(); }

std::string ChildExit::Describe() const {
  if (!signaled()) return "exited with code " + std::to_string(code());
  const char* name = strsignal(code());
  return "was killed by signal " + std::to_string(code()) + " (" + (name ? name : "?") + ")";
}

void SleepMs(int ms) {
  if (ms <= 0) return;
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

ChildSet::~ChildSet() {
  if (running_.empty()) return;
  Signal(SIGKILL);
  for (const Child& c : running_) {
    int st;
    while (waitpid(c.pid, &st, 0) < 0 && errno == EINTR) {
    }
  }
}

void ChildSet::Add(int rank, pid_t pid) {
  setpgid(pid, pid);  // fails harmlessly when the child got there first or has exec'd
  running_.push_back({rank, pid});
}

std::vector<ChildExit> ChildSet::Reap() {
  std::vector<ChildExit> exits;
  for (size_t i = 0; i < running_.size();) {
    int st = 0;
    pid_t r = waitpid(running_[i].pid, &st, WNOHANG);
    if (r == 0 || (r < 0 && errno == EINTR)) {
      ++i;
      continue;
    }
    ChildExit e;
    e.rank = running_[i].rank;
    e.pid = running_[i].pid;
    // r < 0 (ECHILD): someone else reaped it (a SIGCHLD set to SIG_IGN); call it killed.
    e.wait_status = r < 0 ? SIGKILL : st;
    if (r < 0)
      TUTTI_LOG(Warn, Launch, "rank %d (pid %d) was reaped elsewhere: %s", e.rank, e.pid,
                strerror(errno));
    exits.push_back(e);
    if (!e.ok()) failed_groups_.push_back(e.pid);
    running_.erase(running_.begin() + static_cast<long>(i));
  }
  return exits;
}

void ChildSet::Signal(int sig) {
  for (const Child& c : running_) {
    // The whole process group; the pid alone when the child has left its group.
    if (kill(-c.pid, sig) != 0) kill(c.pid, sig);
  }
}

std::vector<ChildExit> ChildSet::Terminate(double grace_s, const WaitFn& wait) {
  using Clock = std::chrono::steady_clock;
  std::vector<ChildExit> exits = Reap();
  // What a failed child started lives on in its group (whose number cannot be reused while it
  // has members): SIGTERM now, SIGKILL when the others are done. Not waited for: orphans are
  // reaped by init, which may be slow to do it.
  for (pid_t g : failed_groups_) kill(-g, SIGTERM);
  if (!running_.empty()) {
    TUTTI_LOG(Info, Launch, "sending SIGTERM to %zu ranks", running_.size());
    Signal(SIGTERM);
  }
  const auto deadline = Clock::now() + std::chrono::duration<double>(grace_s);
  bool killed = false;
  int sleep_ms = 1;
  while (true) {
    for (const ChildExit& e : Reap()) exits.push_back(e);
    if (running_.empty()) break;
    if (!killed && Clock::now() >= deadline) {
      TUTTI_LOG(Info, Launch, "sending SIGKILL to %zu ranks after %.1f s", running_.size(),
                grace_s);
      Signal(SIGKILL);
      killed = true;
    }
    wait(sleep_ms);
    sleep_ms = std::min(sleep_ms * 2, 20);
  }
  for (pid_t g : failed_groups_) kill(-g, SIGKILL);
  failed_groups_.clear();
  return exits;
}

}  // namespace tutti
