// mpi_perf: tutti_perf's sweep and table over MPI's collectives (bench/perf/mpi_backend.h), to
// compare tutti with Open MPI on the same machine. One process per rank, started by mpirun:
//
//   bazel build -c opt //bench:mpi_perf
//   mpirun --allow-run-as-root --oversubscribe -np 4 bazel-bin/bench/mpi_perf -b 8 -e 64M -f 4
//   mpirun -np 4 mpi_perf --coll all_gather -d all -b 1K -e 16M -f 4
//
// The flags and the table are tutti_perf's (bench/perf/tutti_perf.cc lists them), except that
// --algo is refused (Open MPI chooses; OMPI_MCA_coll_tuned_* variables force a choice) and -T
// has no effect. Rows MPI cannot run (reductions of fp16/bf16/fp8, avg, premul_sum) are skipped
// with a "# skipped" line.
#include "bench/perf/mpi_backend.h"
#include "bench/perf/perf_runner.h"
#include "core/launch/launch_env.h"

int main(int argc, char** argv) {
  // Before MPI_Init, the rank that prints flag errors comes from the launcher's variables
  // (OMPI_COMM_WORLD_RANK under Open MPI's mpirun).
  auto launch = tutti::LaunchInfoFromEnv();
  const int launch_rank = launch.ok() ? launch->rank : 0;
  return tutti::perf::PerfMain(argc, argv, "mpi_perf", launch_rank, tutti::perf::MpiBackend::Create);
}
