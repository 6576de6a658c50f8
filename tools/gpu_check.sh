#!/usr/bin/env bash
# GPU check, for a machine with a GPU: runs the CUDA tests (device query, copy kernel) built
# here and carried over. On the build machine:
#   bazel build //kernels/cuda:device_test //kernels/cuda:reduce_test
# then on the GPU machine, from the repository root:
#   bash tools/gpu_check.sh [bazel-bin dir]
set -euo pipefail
bin=${1:-bazel-bin}
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv || true
status=0
for t in "$bin"/kernels/cuda/device_test "$bin"/kernels/cuda/reduce_test; do
  echo "== $t"
  "$t" --gtest_brief=0 || status=1
done
exit $status
