// The seed's torch.multiprocessing.spawn example: fn runs in 4 processes, each printing its rank.
//
//   bazel run //tools/examples:spawn_hello
#include <cstdio>
#include <string>

#include "core/launch/spawn.h"

int fn(int rank, const std::string& param1, const std::string& param2) {
  printf("%s %s - rank: %d\n", param1.c_str(), param2.c_str(), rank);
  return 0;
}

int main() {
  tutti::Status st = tutti::Spawn(4, [](int rank) { return fn(rank, "A0", "B1"); });
  if (!st.ok()) {
    fprintf(stderr, "%s\n", st.ToString().c_str());
    return 1;
  }
  return 0;
}
