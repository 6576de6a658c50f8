#!/usr/bin/env bash
# Smoke test of a peer back-end of the perf harness on 2 ranks:
#   peer_perf_smoke_test.sh mpi  MPIRUN    MPI_PERF     (ranks started by mpirun)
#   peer_perf_smoke_test.sh gloo TUTTIRUN  GLOO_PERF    (ranks started by tuttirun)
# Every collective, all types and ops, a tiny checked sweep: exit 0, #wrong 0 in every row, the
# footers, and "# skipped" lines exactly for what the library cannot reduce. Then a result
# spoiled on purpose must fail the run (so the check really ran), and a bad --algo is a setting
# error (exit 2).
set -uo pipefail
mode=$1 launcher=$2 perf=$3
# Under --config=asan: the peer libraries (Open MPI, Gloo) leak by design at exit; LeakSanitizer
# would fail the run for them. Every other check of AddressSanitizer stays on.
[[ -n ${ASAN_OPTIONS:-} ]] && export ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0"
fail=0
colls="all_reduce all_gather reduce_scatter broadcast reduce scatter gather all_to_all send_recv"
small=(-b 8 -e 4K -f 8 -n 2 -w 1)

run() {  # run ARGS...: output (rank prefixes removed) in $out, exit status in $rc
  if [[ $mode == mpi ]]; then
    # As root Open MPI wants --allow-run-as-root; --oversubscribe: the test may get one core.
    out=$(timeout 120 "$launcher" --allow-run-as-root --oversubscribe -np 2 "$perf" "$@" 2>&1)
  else
    out=$(timeout 120 "$launcher" -n 2 "$perf" "$@" 2>&1 | sed -E 's/^\[rank [0-9]+\] //')
  fi
  rc=${PIPESTATUS[0]}
}
bad() {
  echo "FAIL: $*"
  echo "$out" | tail -30
  fail=1
}
rows() { grep -E '^ +[0-9]+ +[0-9]+ ' <<<"$out"; }

# Types and ops (out of 12 x 9) that are skipped: band/bor/bxor on the 6 floating-point types
# (integer types only, for every library); and what the library cannot reduce: MPI has no
# fp16/bf16/fp8 arithmetic, Gloo has fp16 but not bf16/fp8; neither has avg or premul_sum; Gloo
# has no bitwise ops (MPI has MPI_BAND/BOR/BXOR).
if [[ $mode == mpi ]]; then unreducible_types=4; int_skips=2; else unreducible_types=3; int_skips=5; fi
skipped_reducing=$((unreducible_types * 9 + (6 - unreducible_types) * 5 + 6 * int_skips))

for coll in $colls; do
  run --coll "$coll" -d all -o all "${small[@]}" -r 1
  nrows=$(rows | wc -l)
  nskipped=$(grep -c '^# skipped: ' <<<"$out")
  echo "== $mode $coll on 2 ranks: exit $rc, $nrows rows, $nskipped skipped"
  [[ $rc -eq 0 ]] || bad "$coll exited $rc"
  case $coll in
    all_reduce | reduce_scatter | reduce) want_skipped=$skipped_reducing ;;
    *) want_skipped=0 ;;
  esac
  [[ $nskipped -eq $want_skipped ]] || bad "$coll: $nskipped '# skipped' lines, expected $want_skipped"
  [[ $nrows -gt 0 ]] || bad "$coll: no rows"
  badrows=$(rows | awk '
    NF != 13 || $6 !~ /^[0-9.]+$/ || $9 != "0" { print; next }
    $10 != "-" && $13 != "0" { print }')
  [[ -z $badrows ]] || bad "$coll: rows with wrong elements or bad fields:"$'\n'"$badrows"
  grep -qE '^# Out of bounds values : 0 OK$' <<<"$out" || bad "$coll: no '# Out of bounds values : 0 OK'"
  grep -qE '^# Avg bus bandwidth    : [0-9.e+-]+$' <<<"$out" || bad "$coll: no '# Avg bus bandwidth' footer"
  grep -qE "^# ${mode}_perf  coll: $coll  backend: $mode " <<<"$out" || bad "$coll: no preamble naming the back-end"
done

# Gloo's own reduce-scatter (not the default; racy for messages beyond the socket buffers, see
# gloo_backend.h, so only small ones here).
if [[ $mode == gloo ]]; then
  run --coll reduce_scatter --algo halving_doubling -d all -o all "${small[@]}"
  echo "== gloo reduce_scatter --algo halving_doubling: exit $rc, $(rows | wc -l) rows"
  [[ $rc -eq 0 ]] || bad "reduce_scatter --algo halving_doubling exited $rc"
  grep -qE '^# Out of bounds values : 0 OK$' <<<"$out" || bad "halving_doubling: wrong results"
fi

# The check is live: one spoiled element on rank 1 fails the run.
run -b 1K -e 1K -n 1 -w 0 --debug-corrupt-rank 1
echo "== corrupted result: exit $rc"
[[ $rc -ne 0 ]] || bad "a corrupted result did not fail the run"
grep -q '^# FAILED: wrong results' <<<"$out" || bad "a corrupted result: no '# FAILED' summary"

# A setting error.
run --coll all_gather --algo no_such_algorithm -b 8 -e 8
echo "== bad --algo: exit $rc"
[[ $rc -eq 2 ]] || bad "--algo no_such_algorithm: exit $rc, expected 2"
grep -q -- '--algo no_such_algorithm' <<<"$out" || bad "--algo no_such_algorithm: no message naming it"

if [[ $fail -ne 0 ]]; then
  echo "FAILED"
  exit 1
fi
echo "PASSED"
