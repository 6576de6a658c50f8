#!/usr/bin/env bash
# The main job: sets up the machine, then runs multi-rank programs on this host: the seed
# examples under tuttirun and spawn, an all_reduce on 4 ranks, the collective benchmark
# (tutti_perf, nccl-tests style, 4 ranks) and the point-to-point benchmark (2 processes, shm and
# tcp, beside memcpy and raw TCP). `bash tools/demo.sh [--quick]`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
bazel build -c opt //tools:tuttirun //tools/examples:all //bench:p2p_bench //bench:tutti_perf
bin=$(bazel info -c opt bazel-bin 2>/dev/null)
echo "== tuttirun -n 4 hello_env"
"$bin/tools/tuttirun" -n 4 "$bin/tools/examples/hello_env"
echo "== spawn: groups (world + new_group)"
"$bin/tools/examples/groups"
echo "== tuttirun -n 2 send_recv (a 2x2 tensor from rank 0 to rank 1)"
"$bin/tools/tuttirun" -n 2 "$bin/tools/examples/send_recv"
echo "== tuttirun -n 4 all_reduce (ones * rank on every rank)"
"$bin/tools/tuttirun" -n 4 "$bin/tools/examples/all_reduce"
max=64M
[[ ${1:-} == --quick ]] && max=1M
echo "== tutti_perf: all_reduce on 4 ranks, 8 B .. $max"
"$bin/tools/tuttirun" -n 4 "$bin/bench/tutti_perf" -b 8 -e "$max" -f 8 --coll all_reduce
echo "== p2p_bench"
"$bin/bench/p2p_bench" "$@"
