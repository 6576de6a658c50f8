#!/usr/bin/env bash
# The benchmark runs end to end and prints all six rows with numbers.
set -euo pipefail
out=$("$1" --quick)
echo "$out"
rows=$(echo "$out" | grep -cE '^(shm|tcp) +(latency|bandwidth) +[0-9]+ (B|MiB) +[0-9]+\.[0-9]+ (us|GB/s) ')
[[ $rows == 6 ]] || { echo "expected 6 result rows, got $rows"; exit 1; }
