// Test harness: N ranks as real processes (fork), each launched like tuttirun would (RANK,
// WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT, TUTTI_SECRET). Unlike
// Spawn(), a failing rank does not stop the others: the test sees how every rank ended.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace tutti::testing {

struct RankEnd {
  bool exited = false;  // else killed by `signal`
  int code = 0;
  int signal = 0;
  double seconds = 0;  // from start until it ended
};

// Runs fn(rank) in n forked processes with extra environment `env`; fn's return value is the
// exit code. Kills everything still running after timeout_s.
std::vector<RankEnd> RunProcRanks(int n, const std::function<int(int rank)>& fn,
                                  const std::map<std::string, std::string>& env, double timeout_s);

}  // namespace tutti::testing
