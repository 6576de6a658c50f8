#!/usr/bin/env bash
# tools/setup.sh --torch: makes .venv at the repository root with torch 2.11.0 from PyPI, then
# builds tutti_torch with Bazel and installs it into .venv (backend "tutti" registers itself when
# torch is imported). Quick when everything is there.
#
# torch's wheel asks for the whole CUDA stack (~4 GB); the CUDA toolkit on these machines already
# has most of its libraries, so only the pure-Python dependencies and the three NVIDIA libraries
# the toolkit lacks (cuFile, cuSPARSELt, NVSHMEM) are installed, without their dependencies.
# Exit status 3: PyPI could not be reached (tools/test.sh then skips the torch tests, saying so).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
venv=$root/.venv
py=$venv/bin/python
torch_version=2.11.0
say() { echo "tools/setup.sh --torch: $*"; }

if ! "$py" -c "import torch, sys; sys.exit(torch.__version__.split('+')[0] != '$torch_version')" 2>/dev/null; then
  if [[ ! -x $py ]]; then
    python=${TUTTI_PYTHON:-python3}
    say "making $venv with $($python --version 2>&1)"
    "$python" -m venv "$venv"
  fi
  pip=("$py" -m pip install --disable-pip-version-check -q)
  if ! "$py" -m pip download --disable-pip-version-check -q --no-deps -d "$venv/.probe" "six==1.16.0" >/dev/null 2>&1; then
    say "PyPI cannot be reached: torch is not installed (the torch backend's targets are skipped)" >&2
    exit 3
  fi
  rm -rf "$venv/.probe"
  say "installing torch $torch_version from PyPI (~530 MB)"
  "${pip[@]}" --no-deps "torch==$torch_version"
  "${pip[@]}" filelock "typing-extensions>=4.10.0" "setuptools<82" "sympy>=1.13.3" "networkx>=2.5.1" jinja2 \
    "fsspec>=0.8.5" numpy
  "${pip[@]}" --no-deps "nvidia-cufile==1.15.1.6.*" "nvidia-cusparselt-cu13==0.8.0" "nvidia-nvshmem-cu13==3.4.5"
  "$py" -c "import torch, torch.distributed as d; assert d.is_available()" ||
    { say "torch does not import; see the error above" >&2; exit 1; }
fi

cd "$root"
# Bazel looks for torch when its server starts or on `sync --configure` (tools/bazel/torch_configure.bzl).
bazel sync --configure >/dev/null 2>&1 || true
flags=()
[[ ${CI:-} == true ]] && flags+=(--config=ci)
bazel build "${flags[@]}" //tools/torch:tutti_torch
site=$("$py" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
bash tools/torch/install.sh "$site" tools/torch/tutti_torch/__init__.py bazel-bin/tools/torch/tutti_torch/_C.so
"$py" -c "import torch, torch.distributed as d; assert 'tutti' in d.Backend.backend_list" ||
  { say "tutti_torch did not register backend \"tutti\"" >&2; exit 1; }
say "ready: $venv/bin/torchrun --nproc-per-node 4 tools/examples/python/all_reduce.py"
