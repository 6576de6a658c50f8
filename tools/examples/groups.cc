// The seed's process-group example, run through spawn: init the world communicator in each
// process, then new_group over all ranks, and a smaller group that ranks 1 and 3 are not in.
//
//   bazel run //tools/examples:groups
#include <cstdio>

#include "core/communicator.h"
#include "core/launch/spawn.h"

int fn(int rank, int world_size) {
  auto world = tutti::Communicator::InitFromEnv();
  if (!world.ok()) {
    fprintf(stderr, "rank %d: %s\n", rank, world.status().ToString().c_str());
    return 1;
  }
  std::vector<int> all;
  for (int r = 0; r < world_size; ++r) all.push_back(r);
  auto group = (*world)->NewGroup(all);
  if (!group.ok()) {
    fprintf(stderr, "rank %d: %s\n", rank, group.status().ToString().c_str());
    return 1;
  }
  printf("rank %d: group of all ranks has size %d, my rank there is %d\n", rank, (*group)->size(), (*group)->rank());
  auto pair = (*world)->NewGroup({0, 2});
  if (pair.ok()) {
    printf("rank %d: in group [0, 2] as rank %d of %d\n", rank, (*pair)->rank(), (*pair)->size());
  } else if (pair.status().code() == tutti::Code::kNotMember) {
    printf("rank %d: %s\n", rank, pair.status().message().c_str());
  } else {
    fprintf(stderr, "rank %d: %s\n", rank, pair.status().ToString().c_str());
    return 1;
  }
  return 0;
}

int main() {
  // As in the seed: the address of the store is set before spawning (spawn fills in the rest).
  tutti::SpawnOptions opts;
  opts.master_addr = "127.0.0.1";
  tutti::Status st = tutti::Spawn(4, [](int rank) { return fn(rank, 4); }, opts);
  if (!st.ok()) {
    fprintf(stderr, "%s\n", st.ToString().c_str());
    return 1;
  }
  return 0;
}
