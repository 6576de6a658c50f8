#!/usr/bin/env bash
# Installs what tutti needs to build and test on Debian bookworm, from Debian's packages.
# Idempotent and quick when everything is there: apt runs only for missing packages.
#   --peers   also install the libraries tutti is compared with (Open MPI, Gloo): optional, for
#             //bench:mpi_perf, //bench:gloo_perf and tools/compare_peers.sh
#   --fuzz    also install clang-14 with libFuzzer and lld, for tools/fuzz.sh (tools/test.sh)
#   --torch   also make the virtual environment .venv with PyPI's torch and install tutti_torch
#             (backend "tutti" for torch.distributed) into it; exit status 3 when PyPI cannot be
#             reached (tools/torch/setup_venv.sh)
set -euo pipefail
peers=0
fuzz=0
torch=0
for arg in "$@"; do
  case $arg in
    --peers) peers=1 ;;
    --fuzz) fuzz=1 ;;
    --torch) torch=1 ;;
    -h | --help)
      sed -n '2,9s/^# \{0,1\}//p' "$0"
      exit 0
      ;;
    *)
      echo "tools/setup.sh: unknown argument $arg (known: --peers, --fuzz, --torch)" >&2
      exit 2
      ;;
  esac
done
packages=(
  bazel-bootstrap   # Bazel 4.2.3 (works offline with the stand-ins under tools/bazel/)
  g++ libgtest-dev libgmock-dev libbenchmark-dev
  iproute2 iptables procps   # multi-host tests in network namespaces
)
if ((fuzz)); then
  packages+=(clang-14 libfuzzer-14-dev libclang-rt-14-dev lld)   # tools/fuzz.sh
fi
if ((peers)); then
  packages+=(openmpi-bin libopenmpi-dev libgloo-dev)   # tools/bazel/peers_configure.bzl finds them
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "tools/setup.sh: installing ${missing[*]}"
  sudo_cmd=""
  [[ $(id -u) == 0 ]] || sudo_cmd="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo_cmd apt-get -o DPkg::Lock::Timeout=300 update -qq
  $sudo_cmd apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
command -v bazel >/dev/null || { echo "tools/setup.sh: bazel is still missing" >&2; exit 1; }
if ((torch)); then
  bash "$(dirname "$0")/torch/setup_venv.sh"
fi
