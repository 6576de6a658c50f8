#!/usr/bin/env bash
# Installs what tutti needs to build and test on Debian bookworm, from Debian's packages.
# Idempotent and quick when everything is there: apt runs only for missing packages.
set -euo pipefail
packages=(
  bazel-bootstrap   # Bazel 4.2.3 (works offline with the stand-ins under tools/bazel/)
  g++ libgtest-dev libgmock-dev libbenchmark-dev
  iproute2 iptables procps   # multi-host tests in network namespaces
)
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
