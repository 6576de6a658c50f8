// tuttirun: runs a program as the ranks of one tutti job (like torchrun). See
// core/launch/launcher.h or `tuttirun --help`.
#include <cstdio>
#include <string>
#include <vector>

#include "core/launch/launcher.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  tutti::Result<tutti::LauncherOptions> opts = tutti::ParseLauncherArgs(args);
  if (!opts.ok()) {
    fprintf(stderr, "tuttirun: %s\nTry 'tuttirun --help'.\n", opts.status().message().c_str());
    return 2;
  }
  if (opts->help) {
    fputs(tutti::LauncherUsage().c_str(), stdout);
    return 0;
  }
  return tutti::RunLauncher(std::move(opts).value());
}
