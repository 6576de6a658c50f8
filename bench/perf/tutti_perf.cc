// tutti_perf: the nccl-tests-style benchmark of tutti's collectives. One process per rank,
// started by a launcher (tuttirun, torchrun, mpirun, srun); each forms the world communicator
// with Communicator::InitFromEnv(). Rank 0 prints the table.
//
//   bazel build -c opt //tools:tuttirun //bench:tutti_perf
//   bazel-bin/tools/tuttirun -n 4 bazel-bin/bench/tutti_perf -b 8 -e 256M -f 2
//   tuttirun -n 4 tutti_perf --coll all_gather -b 1K -e 64M -f 4 -d all
//   tuttirun -n 8 tutti_perf --coll all_reduce --algo tree -o all -n 50 -w 10
//   TUTTI_TRANSPORT=tcp tuttirun -n 2 tutti_perf -b 8 -e 64M -f 4
//
// Flags (nccl-tests' letters and meanings; sizes take K/M/G suffixes, powers of 1024):
//   -b minbytes (32M)  -e maxbytes (32M)  -f step factor (1)  -i step bytes when -f is 1 (1M)
//   -n iterations (20)  -w warm-up iterations (5)  -c check 0/1 (1)  -d type|all (float)
//   -o op|all: sum prod min max avg premul_sum (sum)  -r root (0)
//   -a time reported: 0 rank 0's, 1 average over ranks (default), 2 min, 3 max
//   -z blocking 0/1 (accepted; every call is blocking)  -T timeout in seconds  -h help
//   -g 1, -t 1, -G n (accepted for compatibility)
//   --coll all_reduce (default) | all_gather | reduce_scatter | broadcast | reduce | scatter |
//          gather | all_to_all | send_recv (rank r sends to r+1 while receiving from r-1)
//   --algo NAME   tutti's algorithm for the collective (CollOptions.algorithm), e.g. ring, tree,
//                 rhd, doubling, bruck, binomial, flat, pairwise; an algorithm the collective lacks is an error
//
// Output (columns as nccl-tests; "-" where a field has no meaning, e.g. redop of broadcast,
// root of all_reduce, the in-place columns of send_recv):
//   #        size         count        type       redop    root        time     algbw  ...
//   #         (B)    (elements)                                        (us)    (GB/s) ...
//             1024           256     float32         sum       -      41.62      0.02 ...
//   # Out of bounds values : 0 OK
//   # Avg bus bandwidth    : 1.234
// size S is the bytes of the operation: for all_gather, reduce_scatter, gather, scatter and
// all_to_all the whole array (count x nranks x element size; count is the per-rank count).
// time is per iteration in microseconds (n iterations timed together after a barrier, -w
// warm-ups before), algbw = S / time, busbw = algbw x 2(n-1)/n (all_reduce), (n-1)/n
// (all_gather, reduce_scatter, all_to_all, gather, scatter) or 1 (broadcast, reduce,
// send_recv). Each row runs out-of-place, then in-place (send == recv; all_gather/gather send
// = recv + rank x count; reduce_scatter/scatter recv = send + rank x count).
// With -c 1 every result is compared with an exactly computed expectation (bench/perf/
// perf_data.h); #wrong counts wrong elements over all ranks, the ranks print the first wrong
// element, and the exit status is 1 when any is wrong (2 for a bad flag or setting).
//
// The harness (flags, sweep, data, timing, table) is bench/perf/perf_*.{h,cc}; this file only
// plugs in the tutti back-end (bench/perf/tutti_backend.h). Other libraries implement
// PerfBackend (bench/perf/perf_backend.h) in their own binaries and print the same table.
#include "bench/perf/perf_runner.h"
#include "bench/perf/tutti_backend.h"
#include "core/launch/launch_env.h"

int main(int argc, char** argv) {
  auto launch = tutti::LaunchInfoFromEnv();
  const int launch_rank = launch.ok() ? launch->rank : 0;
  return tutti::perf::PerfMain(argc, argv, "tutti_perf", launch_rank, tutti::perf::TuttiBackend::Create);
}
