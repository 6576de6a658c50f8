// How this process was launched: rank, world size and the rendezvous store's address, read from
// the variables that tuttirun/torchrun, Open MPI's mpirun or Slurm's srun set.
#pragma once

#include <string>
#include <vector>

#include "core/base/status.h"

namespace tutti {

struct LaunchInfo {
  int rank = 0, world_size = 1, local_rank = 0, local_world_size = 1;
  std::string master_addr;  // host of the store ("" when nothing says where it is)
  int master_port = 0;      // 0 when nothing says which port
  std::string secret;       // TUTTI_SECRET or ""
  // "torchrun" (RANK/WORLD_SIZE, also what tuttirun sets), "mpirun", "srun", or "single"
  // (nothing set: rank 0 of 1).
  std::string source;
};

// Reads, in this order of precedence:
//   RANK + WORLD_SIZE (LOCAL_RANK, LOCAL_WORLD_SIZE optional)          -> "torchrun"
//   OMPI_COMM_WORLD_RANK + _SIZE (+ _LOCAL_RANK, _LOCAL_SIZE)         -> "mpirun"
//   SLURM_PROCID + SLURM_NTASKS (+ SLURM_LOCALID, SLURM_NTASKS_PER_NODE or
//     SLURM_STEP_TASKS_PER_NODE, taking the entry for SLURM_NODEID)  -> "srun"
//   nothing                                                            -> "single"
// Without local variables all ranks are taken to be on this host. MASTER_ADDR/MASTER_PORT win
// when set; otherwise srun uses the first host of SLURM_NODELIST, an all-local job 127.0.0.1,
// and mpirun/srun port 29500. Half a pair (RANK without WORLD_SIZE), a value that does not parse
// or is out of range is an InvalidArgument naming the variable and its value.
Result<LaunchInfo> LaunchInfoFromEnv();

// Expands a Slurm host list: "node[01-04,07],gpu5" -> node01 node02 node03 node04 node07 gpu5.
// Zero padding follows the range's first number; several bracket groups in one name multiply
// ("r[1-2]n[1-2]" -> r1n1 r1n2 r2n1 r2n2). Malformed lists ("n[1-", "n[3-1]", "a,,b") are an
// InvalidArgument.
Result<std::vector<std::string>> ExpandSlurmNodeList(const std::string& list);

// The entry of SLURM_NTASKS_PER_NODE-style text ("4", "4(x2)", "2,3", "4(x2),3") for node
// `node_index` (0-based); an index past the end uses the first entry.
Result<int> SlurmTasksOnNode(const std::string& text, int node_index);

}  // namespace tutti
