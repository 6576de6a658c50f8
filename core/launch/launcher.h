// The logic of tuttirun (tools/tuttirun.cc), a torchrun-like launcher:
//   tuttirun -n 4 PROG ARGS...
// runs PROG 4 times with RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR,
// MASTER_PORT and TUTTI_SECRET set, prefixes each line of output with "[rank R] ", forwards
// SIGINT/SIGTERM/SIGHUP, and stops every rank when one fails.
#pragma once

#include <string>
#include <vector>

#include "core/base/status.h"

namespace tutti {

struct LauncherOptions {
  int nproc_per_node = 1;
  int nnodes = 1;
  int node_rank = 0;
  std::string master_addr = "127.0.0.1";
  int master_port = 0;      // 0: a free port when nnodes == 1, else 29500 (ResolveLauncherDefaults)
  double timeout_s = 0;     // 0: no limit
  bool prefix = true;       // false: ranks write straight to our stdout/stderr
  std::string secret;       // "": TUTTI_SECRET, else random when nnodes == 1
  bool help = false;
  std::vector<std::string> command;  // PROG ARGS...
};

// Parses the arguments after argv[0]. Options end at "--" or at the first argument that is not
// an option (so PROG's own options are left alone). "--opt=value" and "--opt value" both work,
// as do the torchrun spellings (--nproc_per_node, --node_rank, ...). Errors are InvalidArgument.
Result<LauncherOptions> ParseLauncherArgs(const std::vector<std::string>& args);

// The text of --help.
std::string LauncherUsage();

// Fills master_port and secret. More than one node needs the same secret on every node, so it
// must come from --secret or TUTTI_SECRET.
Status ResolveLauncherDefaults(LauncherOptions* opts);

// Runs the job (options resolved or not) and returns tuttirun's exit code: 0 when every rank
// exits 0; else the first failing rank's exit code or 128 + its signal; 127 when PROG cannot be
// run; 124 when --timeout expired; 128 + signal when tuttirun was interrupted; 2 for bad options.
int RunLauncher(LauncherOptions opts);

}  // namespace tutti
