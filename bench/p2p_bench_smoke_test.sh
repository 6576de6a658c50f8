#!/usr/bin/env bash
# The benchmark runs end to end and prints all six rows with numbers.
set -euo pipefail
out=$("$1" --quick)
echo "$out"
rows=$(echo "$out" | grep -cE '^(shm|tcp) +(latency|bandwidth) +[0-9]+ (B|MiB) +[0-9]+\.[0-9]+ (us|GB/s) ')
[[ $rows == 6 ]] || { echo "expected 6 result rows, got $rows"; exit 1; }
# One transport, latency only: one row, beside the shared-memory spin floor.
out=$("$1" --quick --latency --transport shm)
echo "$out"
rows=$(echo "$out" | grep -cE '^shm +latency +8 B +[0-9]+\.[0-9]+ us +spin ping-pong \(floor\) +[0-9]+\.[0-9]+ us')
[[ $rows == 1 && $(echo "$out" | grep -c bandwidth) == 0 ]] || { echo "expected one shm latency row"; exit 1; }
