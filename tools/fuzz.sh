#!/usr/bin/env bash
# Builds the libFuzzer targets of //tests/fuzz with clang-14 (ASan + UBSan, --config=fuzz) in a
# Bazel output base of their own, so the default output base keeps its GCC toolchain, then runs
# each target for a bounded time or number of runs on a copy of its seed corpus, one fuzzer at a
# time, and prints a table: executions, coverage (cov, ft), corpus size, time, crashes. Exits 1
# if any target crashed (its input is kept and printed), 2 if the build or setup failed.
#
#   bash tools/fuzz.sh [--seconds N] [--runs N] [--workdir DIR] [target...]
#
#   --seconds N   time per target (default 20; 0 = no limit, e.g. with --runs)
#   --runs N      executions per target (default: no limit)
#   --workdir D   where corpora, logs and crashing inputs go (default: a fresh temp folder)
#   target        names of tests/fuzz/*_fuzz.cc without .cc (default: all)
#
# Needs clang-14, libfuzzer-14-dev, libclang-rt-14-dev and lld (Debian packages). Environment:
# TUTTI_FUZZ_OUTPUT_BASE (default $HOME/.cache/tutti-fuzz-bazel).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=20
runs=-1
seconds_given=0
workdir=""
targets=()
while (($#)); do
  case "$1" in
    --seconds) seconds="$2"; seconds_given=1; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --workdir) workdir="$2"; shift 2 ;;
    -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
# --runs alone: run that many inputs, however long it takes.
if [[ $runs != -1 && $seconds_given == 0 ]]; then seconds=0; fi
if ((${#targets[@]} == 0)); then
  for f in tests/fuzz/*_fuzz.cc; do targets+=("$(basename "$f" .cc)"); done
fi
for t in "${targets[@]}"; do
  [[ -f tests/fuzz/$t.cc ]] || { echo "fuzz.sh: no target $t (tests/fuzz/$t.cc)" >&2; exit 2; }
done
for tool in clang-14 ld.lld; do
  command -v "$tool" >/dev/null || {
    echo "fuzz.sh: $tool not found; apt-get install clang-14 libfuzzer-14-dev libclang-rt-14-dev lld" >&2
    exit 2
  }
done

output_base="${TUTTI_FUZZ_OUTPUT_BASE:-$HOME/.cache/tutti-fuzz-bazel}"
[[ -n $workdir ]] || workdir="$(mktemp -d /tmp/tutti-fuzz.XXXXXX)"
mkdir -p "$workdir"
workdir="$(cd "$workdir" && pwd)"
# The fuzz output base goes away on its own after 5 idle minutes.
bazel_fuzz=(bazel "--output_base=$output_base" --max_idle_secs=300)
flags=(--config=fuzz --repo_env=CC=clang-14)

labels=()
for t in "${targets[@]}"; do labels+=("//tests/fuzz:$t"); done
echo "fuzz.sh: building ${#targets[@]} targets with clang-14 in $output_base (log: $workdir/build.log)"
start=$(date +%s)
if ! "${bazel_fuzz[@]}" build "${flags[@]}" "${labels[@]}" >"$workdir/build.log" 2>&1; then
  grep -v "Cannot export local symbol" "$workdir/build.log" | tail -40 >&2
  echo "fuzz.sh: build failed" >&2
  exit 2
fi
bin="$("${bazel_fuzz[@]}" info "${flags[@]}" bazel-bin 2>/dev/null)/tests/fuzz"
echo "fuzz.sh: built in $(($(date +%s) - start)) s"

# Runs one target in its own folder; leaves the libFuzzer log in fuzz-0.log there.
run_one() {
  local t="$1" dir="$workdir/$1"
  rm -rf "$dir"
  mkdir -p "$dir/corpus" "$dir/artifacts"
  cp tests/fuzz/corpus/"$t"/* "$dir/corpus/" 2>/dev/null || true
  (cd "$dir" && "$bin/$t" -jobs=1 -workers=1 -runs="$runs" -max_total_time="$seconds" \
     -timeout=25 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$dir/artifacts/" \
     corpus >"$dir/run.log" 2>&1)
}

failed=()
printf '\n%-22s %12s %10s %7s %7s %7s %7s %8s\n' target execs exec/s cov ft corpus secs crashes
for t in "${targets[@]}"; do
  t0=$(date +%s)
  rc=0
  run_one "$t" || rc=$?
  secs=$(($(date +%s) - t0))
  log="$workdir/$t/fuzz-0.log"
  [[ -f $log ]] || log="$workdir/$t/run.log"
  execs=$(grep -ao 'stat::number_of_executed_units: *[0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || true)
  last=$(grep -aE '^#[0-9]+.*cov: ' "$log" | tail -1 || true)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  crashes=$(find "$workdir/$t/artifacts" -type f | wc -l)
  if ((rc != 0 && crashes == 0)); then crashes=1; fi  # died without an artifact
  corpus=$(find "$workdir/$t/corpus" -type f | wc -l)
  rate=$(( ${execs:-0} / (secs > 0 ? secs : 1) ))
  printf '%-22s %12s %10s %7s %7s %7s %7s %8s\n' "$t" "${execs:-?}" "$rate" "${cov:-?}" "${ft:-?}" \
    "$corpus" "$secs" "$crashes"
  ((crashes == 0)) || failed+=("$t")
done

echo
if ((${#failed[@]})); then
  for t in "${failed[@]}"; do
    echo "== $t crashed; log: $workdir/$t/fuzz-0.log"
    grep -aE 'ERROR:|invariant failed|SUMMARY|Test unit written' "$workdir/$t/fuzz-0.log" \
      2>/dev/null | head -8 || true
    for a in "$workdir/$t"/artifacts/*; do
      [[ -f $a ]] || continue
      echo "   input: $a"
      echo "   reproduce: $bin/$t $a   (or with GCC: bazel run //tests/fuzz:$t -- --mutations=0 $a)"
    done
  done
  echo "fuzz.sh: ${#failed[@]} of ${#targets[@]} targets crashed"
  exit 1
fi
echo "fuzz.sh: ${#targets[@]} targets, no crashes (work folder: $workdir)"
