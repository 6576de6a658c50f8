// Run under the launcher: every rank forms the world communicator and says who it is.
//
//   bazel run //tools:tuttirun -- -n 4 $(pwd)/bazel-bin/tools/examples/hello_env
#include <cstdio>

#include "core/communicator.h"

int main() {
  auto comm = tutti::Communicator::InitFromEnv();
  if (!comm.ok()) {
    fprintf(stderr, "%s\n", comm.status().ToString().c_str());
    return 1;
  }
  auto& c = **comm;
  printf("hello from rank %d of %d (local rank %d of %d)\n", c.rank(), c.size(), c.local_rank(), c.local_size());
  return 0;
}
