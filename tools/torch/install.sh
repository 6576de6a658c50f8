#!/usr/bin/env bash
# Lays tutti_torch out as an installed Python package in DEST (a site-packages directory, or any
# directory on PYTHONPATH): DEST/tutti_torch/{__init__.py,_C.so} and a dist-info whose entry point
# (group "torch.backends") makes `import torch` register backend "tutti", so programs need no
# `import tutti_torch` (TORCH_DEVICE_BACKEND_AUTOLOAD=0 turns that off, as for any torch plugin).
#   install.sh DEST INIT_PY C_SO
set -euo pipefail
if (($# != 3)); then
  echo "usage: $0 DEST INIT_PY C_SO" >&2
  exit 2
fi
dest=$1 init=$2 so=$3
mkdir -p "$dest/tutti_torch" "$dest/tutti_torch-0.1.dist-info"
install -m 0644 "$init" "$dest/tutti_torch/__init__.py"
install -m 0755 "$so" "$dest/tutti_torch/_C.so"
info=$dest/tutti_torch-0.1.dist-info
printf 'Metadata-Version: 2.1\nName: tutti_torch\nVersion: 0.1\nSummary: tutti backend for torch.distributed\n' >"$info/METADATA"
printf '[torch.backends]\ntutti = tutti_torch:_register\n' >"$info/entry_points.txt"
printf 'tutti_torch\n' >"$info/top_level.txt"
printf 'tutti-setup\n' >"$info/INSTALLER"
: >"$info/RECORD"
