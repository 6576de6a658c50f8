// The host's loop around StreamExec::Poll, for a team of host threads (host_world.h) or one
// thread (host_rank.h): poll until the stream ends or fails; yield when idle; leave with kAborted
// when another stream failed (`failed`), with kTimeout when nothing moved for timeout_s (then
// telling the others through `failed`), with kCancelled when `cancelled` (may be empty; asked
// now and then while idle) says so (also telling the others). `after_move(leader)` runs after
// each poll that moved.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

#include "kernels/prims/stream_exec.h"

namespace tutti::prims {

template <class Exec, class TeamT, class AfterMove>
void PollUntilDone(Exec& exec, const TeamT& team, std::atomic<bool>& failed, double timeout_s, AfterMove after_move,
                   const std::function<bool()>& cancelled = {}) {
  using Clock = std::chrono::steady_clock;
  auto last_move = Clock::now();
  for (int idle = 0;;) {
    const int res = exec.Poll(team);
    if (res == kPollDone) return;
    if (res == kPollError) {
      failed.store(true);
      return;
    }
    if (res == kPollMoved) {
      idle = 0;
      last_move = Clock::now();
      after_move(team.leader());
      continue;
    }
    if (++idle < 64) continue;
    std::this_thread::yield();
    if ((idle & 255) != 0) continue;
    const bool abort = team.leader() && failed.load();
    const bool late = team.leader() && std::chrono::duration<double>(Clock::now() - last_move).count() > timeout_s;
    if (team.Any(abort)) {
      exec.Fail(team, kErrAborted);
      return;
    }
    if (team.Any(team.leader() && cancelled && cancelled())) {
      exec.Fail(team, kErrCancelled);
      failed.store(true);
      return;
    }
    if (team.Any(late)) {
      exec.Fail(team, kErrTimeout);
      failed.store(true);
      return;
    }
  }
}

}  // namespace tutti::prims
