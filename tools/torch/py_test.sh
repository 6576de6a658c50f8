#!/usr/bin/env bash
# Runs a Python test of the torch backend with tutti_torch installed into a scratch directory
# (as tools/setup.sh --torch installs it into the virtual environment).
#   py_test.sh PYTHON INSTALL_SH INIT_PY C_SO TEST_PY [ARGS...]
# The test gets that directory as its first argument.
set -euo pipefail
python=$1 install=$2 init=$3 so=$4 test=$5
shift 5
pkg=$(mktemp -d "${TEST_TMPDIR:-/tmp}/tutti_torch.XXXXXX")
trap 'rm -rf "$pkg"' EXIT
bash "$install" "$pkg" "$init" "$so"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
"$python" "$test" "$pkg" "$@"
