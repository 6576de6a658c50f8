// ChildSet: the ranks a launcher forked, each in its own process group, so that stopping a rank
// also stops what it started (`sh -c 'sleep 100'` leaves no sleep behind). Used by Spawn and
// tuttirun; neither starts threads, so children are reaped with waitpid(pid, WNOHANG) polling
// (never waitpid(-1), which would steal other children of the process).
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

namespace tutti {

struct ChildExit {
  int rank = -1;
  pid_t pid = 0;
  int wait_status = 0;  // as from waitpid

  bool ok() const;
  bool signaled() const;
  int code() const;    // exit code, or the signal number when signaled()
  int ShellCode() const;  // exit code, or 128 + signal, as a shell reports it
  // "exited with code 3" / "was killed by signal 9 (Killed)".
  std::string Describe() const;
};

// Sleeps for up to `ms` milliseconds while a ChildSet waits; a launcher that relays output
// passes one that polls its pipes instead.
using WaitFn = std::function<void(int ms)>;
void SleepMs(int ms);

class ChildSet {
 public:
  ChildSet() = default;
  ChildSet(const ChildSet&) = delete;
  ChildSet& operator=(const ChildSet&) = delete;
  // SIGKILLs and reaps whatever is still running.
  ~ChildSet();

  // Records a forked child. The child should call setpgid(0, 0) itself; Add does it too, so
  // whichever runs first wins the race.
  void Add(int rank, pid_t pid);
  size_t running() const { return running_.size(); }
  // Reaps the children that have exited, without blocking, in rank order.
  std::vector<ChildExit> Reap();
  // Sends sig to the process group of every running child.
  void Signal(int sig);
  // SIGTERM to every running child, SIGKILL to those left after grace_s, and reaps them all;
  // returns their exits. What a failed child left running in its group (reaped by Reap since
  // the last Terminate) gets the same treatment. `wait` is called between checks.
  std::vector<ChildExit> Terminate(double grace_s, const WaitFn& wait = SleepMs);

 private:
  struct Child {
    int rank;
    pid_t pid;
  };
  std::vector<Child> running_;
  std::vector<pid_t> failed_groups_;  // groups of failed children reaped since Terminate
};

}  // namespace tutti
