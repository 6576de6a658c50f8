// Fuzz target: tuttirun's command line (core/launch/launcher.h ParseLauncherArgs). Input: the
// arguments, separated by NUL bytes. Checked: accepted options are in range (1..4096 ranks per
// node, 1..2^20 nodes, node rank below the node count, port 0..65535, a timeout that is a
// number >= 0, a non-empty host) with a program to run; the program and its arguments
// are the input's last arguments unchanged; errors are kInvalidArgument.
#include <cmath>
#include <string>
#include <vector>

#include "core/launch/launcher.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tutti;  // NOLINT: a fuzz entry point
  std::vector<std::string> args =
      fuzz::Split(std::string_view(reinterpret_cast<const char*>(data), size), '\0');
  if (size == 0) args.clear();
  Result<LauncherOptions> r = ParseLauncherArgs(args);
  if (!r.ok()) {
    FUZZ_CHECK(r.status().code() == Code::kInvalidArgument, r.status().ToString());
    return 0;
  }
  const LauncherOptions& o = *r;
  if (o.help) return 0;
  FUZZ_CHECK(o.nproc_per_node >= 1 && o.nproc_per_node <= 4096, "nproc per node");
  FUZZ_CHECK(o.nnodes >= 1 && o.nnodes <= (1 << 20), "nnodes");
  FUZZ_CHECK(o.node_rank >= 0 && o.node_rank < o.nnodes, "node rank");
  FUZZ_CHECK(o.master_port >= 0 && o.master_port <= 65535, "port");
  FUZZ_CHECK(o.timeout_s >= 0 && !std::isnan(o.timeout_s), "timeout " + std::to_string(o.timeout_s));
  FUZZ_CHECK(!o.master_addr.empty(), "empty master address");
  FUZZ_CHECK(!o.command.empty() && o.command.size() <= args.size(), "command");
  for (size_t k = 0; k < o.command.size(); ++k)
    FUZZ_CHECK(o.command[k] == args[args.size() - o.command.size() + k], "command changed");
  return 0;
}
