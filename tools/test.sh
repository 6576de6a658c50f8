#!/usr/bin/env bash
# Sets up the machine (tools/setup.sh --fuzz, then --torch) and runs every check CI runs:
# `bash tools/test.sh`
#   0. tools/setup.sh --torch              .venv with PyPI's torch and tutti_torch (skipped, saying
#                                          so, when PyPI cannot be reached: the torch tests are then
#                                          skipped by Bazel)
#   1. bazel test //...                    every test (the torch backend's too)
#   2. bazel test --config=asan <targets>  P2P, collective, store, launcher, transport, C API,
#                                          reliability and device-primitive tests under
#                                          AddressSanitizer + UBSan
#   3. bash tools/fuzz.sh                  every libFuzzer target for TUTTI_FUZZ_SECONDS (15) each
# All three run even if one fails; the exit status is non-zero if any did.
# Extra arguments go to `bazel test` instead (e.g. //tests/...), and only that runs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh --fuzz
flags=()
[[ ${CI:-} == true ]] && flags+=(--config=ci)
if (($#)); then
  exec bazel test "${flags[@]}" "$@"
fi
asan_targets=(
  //core/... //transport/...
  //tests:p2p_test //tests:reliability_test //tests:dead_rank_test //tests:heartbeat_test
  //tests:init_test //tests:misconfig_test //tests:registration_test //tests:stream_test //tests:lazy_connect_test
  //tests:group_test //tests:work_callback_test
  //tests/coll:all //tests:any_source_test //tools/nccl:all
  //algorithms:lowering_test //kernels/prims:all
)
failed=()
start=$SECONDS
stage() {  # stage NAME COMMAND...: runs it, notes a failure, goes on
  local name=$1 t0=$SECONDS
  shift
  echo "==== tools/test.sh: $name"
  if "$@"; then
    echo "==== tools/test.sh: $name passed ($((SECONDS - t0)) s)"
  else
    echo "==== tools/test.sh: $name FAILED ($((SECONDS - t0)) s)"
    failed+=("$name")
  fi
}
torch_setup() {
  local rc=0
  bash tools/setup.sh --torch || rc=$?
  if ((rc == 3)); then
    echo "tools/test.sh: PyPI cannot be reached; the torch backend's tests are skipped"
    return 0
  fi
  return $rc
}
stage "torch setup (tools/setup.sh --torch)" torch_setup
stage "bazel test //..." bazel test "${flags[@]}" //...
stage "ASan/UBSan tests" bazel test "${flags[@]}" --config=asan "${asan_targets[@]}"
stage "fuzzing" bash tools/fuzz.sh --seconds "${TUTTI_FUZZ_SECONDS:-15}"
echo "==== tools/test.sh: $((SECONDS - start)) s in all"
if ((${#failed[@]})); then
  echo "==== tools/test.sh: FAILED: ${failed[*]}"
  exit 1
fi
echo "==== tools/test.sh: all passed"
