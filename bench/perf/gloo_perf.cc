// gloo_perf: tutti_perf's sweep and table over Gloo's collectives (bench/perf/gloo_backend.h), to
// compare tutti with Gloo on the same machine. One process per rank, started by tuttirun (or
// torchrun: anything that sets RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT):
//
//   bazel build -c opt //tools:tuttirun //bench:gloo_perf
//   bazel-bin/tools/tuttirun -n 4 bazel-bin/bench/gloo_perf -b 8 -e 64M -f 4
//   tuttirun -n 4 gloo_perf --coll reduce_scatter -d all -o all -b 1K -e 1M -f 4
//
// The flags and the table are tutti_perf's (bench/perf/tutti_perf.cc lists them); --algo picks
// Gloo's all_reduce algorithm (ring, the default, or bcube) and how reduce_scatter is done
// (allreduce, the default, or halving_doubling: Gloo's own, racy for large messages; see
// gloo_backend.h). Rows Gloo cannot run (reductions of bf16/fp8, avg, premul_sum) are skipped
// with a "# skipped" line.
#include "bench/perf/gloo_backend.h"
#include "bench/perf/perf_runner.h"
#include "core/launch/launch_env.h"

int main(int argc, char** argv) {
  auto launch = tutti::LaunchInfoFromEnv();
  const int launch_rank = launch.ok() ? launch->rank : 0;
  return tutti::perf::PerfMain(argc, argv, "gloo_perf", launch_rank, tutti::perf::GlooBackend::Create);
}
