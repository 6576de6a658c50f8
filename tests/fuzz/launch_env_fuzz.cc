// Fuzz target: how a process reads its launch (core/launch/launch_env.h LaunchInfoFromEnv) from
// the variables torchrun/tuttirun, mpirun and srun set. Input: records of (variable index, value
// up to a NUL byte); every launch variable is unset before each run. Checked: an accepted launch
// has 0 <= rank < world_size, 1 <= local_world_size <= world_size, 0 <= local_rank <
// local_world_size, a port in [0, 65535] (0 only for a single rank without MASTER_PORT), a
// non-empty store host, the secret as set, and the source that the set variables name;
// anything else is kInvalidArgument. (libFuzzer builds skip node lists of more than a few
// thousand hosts: fuzz_util.h SlurmListTooCostly.)
#include <cstdlib>
#include <string>

#include "core/launch/launch_env.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

constexpr const char* kVars[] = {
    "RANK",          "WORLD_SIZE",           "LOCAL_RANK",
    "LOCAL_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
    "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE", "SLURM_PROCID",
    "SLURM_NTASKS",  "SLURM_LOCALID",        "SLURM_NTASKS_PER_NODE",
    "SLURM_STEP_TASKS_PER_NODE", "SLURM_NODEID", "SLURM_NODELIST",
    "MASTER_ADDR",   "MASTER_PORT",          "TUTTI_SECRET",
};
constexpr int kNumVars = sizeof(kVars) / sizeof(kVars[0]);

bool Set(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0';
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tutti;  // NOLINT: a fuzz entry point
  unsetenv("TUTTI_DEBUG");
  for (const char* v : kVars) unsetenv(v);
  fuzz::Input in(data, size);
  while (!in.empty()) {
    const char* name = kVars[in.U8() % kNumVars];
    std::string value = in.Field('\0');
    if (fuzz::SlurmListTooCostly(value) && std::string(name) == "SLURM_NODELIST") return 0;
    setenv(name, value.c_str(), 1);
  }

  Result<LaunchInfo> r = LaunchInfoFromEnv();
  if (!r.ok()) {
    FUZZ_CHECK(r.status().code() == Code::kInvalidArgument, r.status().ToString());
    return 0;
  }
  const LaunchInfo& i = *r;
  FUZZ_CHECK(i.world_size >= 1 && i.rank >= 0 && i.rank < i.world_size, "rank/world size");
  FUZZ_CHECK(i.local_world_size >= 1 && i.local_world_size <= i.world_size, "local world size");
  FUZZ_CHECK(i.local_rank >= 0 && i.local_rank < i.local_world_size, "local rank");
  FUZZ_CHECK(i.master_port >= 0 && i.master_port <= 65535, "port");
  FUZZ_CHECK(i.master_port != 0 || (i.world_size == 1 && !Set("MASTER_PORT")), "port 0");
  FUZZ_CHECK(!i.master_addr.empty(), "no store host");
  FUZZ_CHECK(i.secret == (Set("TUTTI_SECRET") ? std::getenv("TUTTI_SECRET") : ""), "secret");
  const char* want = Set("RANK") || Set("WORLD_SIZE")                         ? "torchrun"
                     : Set("OMPI_COMM_WORLD_RANK") || Set("OMPI_COMM_WORLD_SIZE") ? "mpirun"
                     : Set("SLURM_PROCID") || Set("SLURM_NTASKS")             ? "srun"
                                                                               : "single";
  FUZZ_CHECK(i.source == want, "source " + i.source + ", expected " + want);
  if (i.source == "single") FUZZ_CHECK(i.world_size == 1 && i.rank == 0, "single rank");
  return 0;
}
