// Spawn: run a function as nprocs forked ranks of one job, like torch.multiprocessing.spawn with
// start_method="fork". Each child sees the variables tuttirun would set, so LaunchInfoFromEnv()
// inside it returns its rank.
#pragma once

#include <functional>
#include <string>

#include "core/base/status.h"

namespace tutti {

struct SpawnOptions {
  double timeout_s = 0;        // 0 = no limit on the whole job; else kill all and return kTimeout
  std::string master_addr = "127.0.0.1";
  int master_port = 0;         // 0 = pick a free port on master_addr
  std::string secret;          // "" = generate a random one (from /dev/urandom, hex)
};

// Forks nprocs children. Each sets RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE (= nprocs),
// MASTER_ADDR, MASTER_PORT and TUTTI_SECRET, runs fn(rank), flushes stdio and _exit()s with fn's
// return value (outside 0..255: 1; an uncaught exception: a message on stderr and 1). Children
// get their own process groups and die with the parent (PR_SET_PDEATHSIG).
// Waits for all. On the first failure (non-zero exit or a signal) the others get SIGTERM, then
// SIGKILL after 3 s; everything is reaped and the error names the rank: "spawn: rank 2 exited
// with code 3" / "spawn: rank 1 was killed by signal 9 (Killed)" (kRemoteError). Starts no
// threads; call it from a process whose other threads hold no locks the children need.
Status Spawn(int nprocs, const std::function<int(int rank)>& fn, const SpawnOptions& opts = {});

// A free TCP port on addr: binds port 0, reads the port back, closes. Another process may take
// it before it is used.
Result<int> PickFreePort(const std::string& addr);

// `bytes` random bytes from /dev/urandom as lower-case hex.
Result<std::string> RandomSecret(int bytes = 16);

}  // namespace tutti
