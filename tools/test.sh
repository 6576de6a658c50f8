#!/usr/bin/env bash
# Sets up the machine (tools/setup.sh) and runs every test: `bash tools/test.sh`.
# Extra arguments go to `bazel test` (e.g. a target pattern such as //tests/...).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
flags=()
[[ ${CI:-} == true ]] && flags+=(--config=ci)
targets=("$@")
((${#targets[@]})) || targets=(//...)
exec bazel test "${flags[@]}" "${targets[@]}"
