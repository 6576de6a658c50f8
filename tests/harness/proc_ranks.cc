#include "tests/harness/proc_ranks.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "core/launch/spawn.h"

namespace tutti::testing {

std::vector<RankEnd> RunProcRanks(int n, const std::function<int(int rank)>& fn,
                                  const std::map<std::string, std::string>& env, double timeout_s) {
  auto port = PickFreePort("127.0.0.1");
  std::vector<pid_t> pids(n, -1);
  std::vector<RankEnd> ends(n);
  const auto start = std::chrono::steady_clock::now();
  fflush(nullptr);
  for (int r = 0; r < n; ++r) {
    pid_t pid = fork();
    if (pid == 0) {
      setenv("RANK", std::to_string(r).c_str(), 1);
      setenv("WORLD_SIZE", std::to_string(n).c_str(), 1);
      setenv("LOCAL_RANK", std::to_string(r).c_str(), 1);
      setenv("LOCAL_WORLD_SIZE", std::to_string(n).c_str(), 1);
      setenv("MASTER_ADDR", "127.0.0.1", 1);
      setenv("MASTER_PORT", std::to_string(port.ok() ? *port : 29500).c_str(), 1);
      setenv("TUTTI_SECRET", "proc-ranks-test", 1);
      for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
      int code = fn(r);
      fflush(nullptr);
      _exit(code);
    }
    pids[r] = pid;
  }
  int left = n;
  while (left > 0) {
    int status = 0;
    pid_t pid = waitpid(-1, &status, WNOHANG);
    double now = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (pid > 0) {
      for (int r = 0; r < n; ++r) {
        if (pids[r] != pid) continue;
        ends[r].exited = WIFEXITED(status);
        ends[r].code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        ends[r].signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
        ends[r].seconds = now;
        pids[r] = -1;
        --left;
      }
      continue;
    }
    if (now > timeout_s) {
      for (pid_t p : pids)
        if (p > 0) kill(p, SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return ends;
}

}  // namespace tutti::testing
