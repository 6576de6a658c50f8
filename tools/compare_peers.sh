#!/usr/bin/env bash
# Compares tutti's collectives with Open MPI's and Gloo's on this machine: the same nccl-tests
# style sweep (bench/perf) through each library's back-end, then a side-by-side summary.
#
#   bash tools/compare_peers.sh                      # 2 and 4 ranks, -b 8 -e 256M -f 4
#   bash tools/compare_peers.sh -e 64M -n 10 -w 2    # perf flags are appended (the last wins)
#   bash tools/compare_peers.sh --ranks "2" --colls all_reduce --libs "tutti-shm mpi"
#
# Options (everything else goes to the perf binaries, after the defaults -b 8 -e 256M -f 4):
#   --ranks "2 4"                                     rank counts
#   --colls "all_reduce all_gather reduce_scatter"    collectives
#   --libs "tutti-shm tutti-tcp mpi gloo"             tutti over shared memory (TUTTI_TRANSPORT=
#                                                     shm), over TCP (=tcp), Open MPI (mpirun),
#                                                     Gloo (under tuttirun); also mpi-tcp: Open
#                                                     MPI on its tcp BTL only (--mca btl tcp,self),
#                                                     the peer for tutti-tcp
#   --repeat K                                        run every sweep K times (default 1);
#                                                     the summary shows per-row medians
#   --results DIR                                     where the tables go (default
#                                                     /tmp/tutti_compare/<date-time>)
#   --timeout SECONDS                                 per run (default 900)
#   --summary-only                                    no build, no runs: print the summary of
#                                                     the tables already in --results DIR
#
# Open MPI and Gloo are optional (tools/setup.sh --peers installs them); a library whose binary
# cannot be built here is skipped with a note. Every run's full output is saved as
# DIR/<lib>.<coll>.n<ranks>.r<k>.txt; DIR/summary.txt is what is printed at the end: per
# collective and rank count, each library's out-of-place time (us) and bus bandwidth (GB/s) per
# size as the tables print them (a row's time: -n iterations timed together after -w warm-ups,
# averaged over ranks, as nccl-tests), the median over the K repeats, and the "# Avg bus
# bandwidth" line (median over repeats). Sweeps run interleaved (repeat, ranks, collective,
# library) so that a burst of load from other jobs hits every library alike; the load average
# before and after each run is recorded in DIR/load.txt.
set -uo pipefail
cd "$(dirname "$0")/.."

ranks="2 4"
colls="all_reduce all_gather reduce_scatter"
libs="tutti-shm tutti-tcp mpi gloo"
results=""
repeat=1
run_timeout=900
summary_only=0
perf_flags=(-b 8 -e 256M -f 4)
while (($#)); do
  case $1 in
    --ranks) ranks=$2; shift 2 ;;
    --colls) colls=$2; shift 2 ;;
    --libs) libs=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --results) results=$2; shift 2 ;;
    --timeout) run_timeout=$2; shift 2 ;;
    --summary-only) summary_only=1; shift ;;
    -h | --help) sed -n '2,32s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) perf_flags+=("$1"); shift ;;
  esac
done
if ((summary_only)); then
  [[ -n $results && -d $results ]] || { echo "compare_peers: --summary-only needs --results DIR" >&2; exit 2; }
else
  [[ -n $results ]] || results=${TMPDIR:-/tmp}/tutti_compare/$(date +%Y%m%d-%H%M%S)
  mkdir -p "$results" || exit 1
fi

# build_all: builds the binaries (-c opt); sets bin and active (the libraries that can run).
build_all() {
  echo "== building (bazel -c opt)"
  bazel build -c opt //tools:tuttirun //bench:tutti_perf || { echo "compare_peers: cannot build tutti_perf" >&2; exit 1; }
  bin=$(bazel info -c opt bazel-bin 2>/dev/null)
  local peer log
  declare -A have=([tutti-shm]=1 [tutti-tcp]=1)
  for peer in mpi gloo; do
    [[ " $libs " == *" $peer "* || ($peer == mpi && " $libs " == *" mpi-tcp "*) ]] || continue
    if log=$(bazel build -c opt "//bench:${peer}_perf" 2>&1); then
      have[$peer]=1
    else
      echo "compare_peers: skipping $peer: //bench:${peer}_perf does not build here" \
        "(absent library? tools/setup.sh --peers installs it):"
      grep -E 'ERROR|incompatible' <<<"$log" | head -3 | sed 's/^/  /'
    fi
  done
  if [[ -n ${have[mpi]:-} ]] && ! command -v mpirun >/dev/null; then
    echo "compare_peers: skipping mpi: no mpirun on PATH"
    unset 'have[mpi]'
  fi
  [[ -n ${have[mpi]:-} ]] && have[mpi-tcp]=1
  active=()
  for lib in $libs; do
    [[ -n ${have[$lib]:-} ]] && active+=("$lib")
  done
}

# run LIB COLL N K: runs one sweep, its output in $results/LIB.COLL.nN.rK.txt.
run() {
  local lib=$1 coll=$2 n=$3 k=$4 out="$results/$1.$2.n$3.r$4.txt"
  local args=(--coll "$coll" "${perf_flags[@]}")
  local cmd
  case $lib in
    tutti-shm) cmd=(env TUTTI_TRANSPORT=shm "$bin/tools/tuttirun" --no-prefix -n "$n" "$bin/bench/tutti_perf" "${args[@]}") ;;
    tutti-tcp) cmd=(env TUTTI_TRANSPORT=tcp "$bin/tools/tuttirun" --no-prefix -n "$n" "$bin/bench/tutti_perf" "${args[@]}") ;;
    mpi) cmd=(mpirun --allow-run-as-root --oversubscribe -np "$n" "$bin/bench/mpi_perf" "${args[@]}") ;;
    mpi-tcp) cmd=(mpirun --allow-run-as-root --oversubscribe --mca btl tcp,self -np "$n" "$bin/bench/mpi_perf" "${args[@]}") ;;
    gloo) cmd=("$bin/tools/tuttirun" --no-prefix -n "$n" "$bin/bench/gloo_perf" "${args[@]}") ;;
  esac
  local before after t0 t1 rc
  before=$(cut -d' ' -f1-3 /proc/loadavg)
  t0=$(date +%s)
  {
    echo "# command: ${cmd[*]}"
    timeout "$run_timeout" "${cmd[@]}" 2>&1
  } >"$out"
  rc=$?
  t1=$(date +%s)
  after=$(cut -d' ' -f1-3 /proc/loadavg)
  printf '%-10s %-15s n=%s r=%s  %4ss  exit %s  load before %s  after %s\n' "$lib" "$coll" "$n" "$k" \
    $((t1 - t0)) "$rc" "$before" "$after" | tee -a "$results/load.txt"
  if ((rc != 0)); then
    echo "  (failed: see $out)"
    grep -vE '^ +[0-9]' "$out" | tail -5 | sed 's/^/  /'
  fi
}

run_all() {
  {
    echo "# compare_peers: $(date -Is) on $(hostname), $(nproc) cores, libraries: ${active[*]}"
    echo "# perf flags: ${perf_flags[*]}"
  } >"$results/load.txt"
  local start k n coll lib
  start=$(date +%s)
  for ((k = 1; k <= repeat; k++)); do
    for n in $ranks; do
      for coll in $colls; do
        for lib in "${active[@]}"; do
          run "$lib" "$coll" "$n" "$k"
        done
      done
    done
  done
  total="$(($(date +%s) - start))s"
}

# The summary: per (ranks, collective) the rows of every library side by side, medians over
# the repeats.
summarize() {
  echo "# compare_peers summary: $(hostname), $(nproc) cores, $(date -Is)"
  echo "# perf flags: ${perf_flags[*]}; $repeat run(s) of each sweep, median per row; runs took $total"
  echo "# columns: out-of-place time (us) and busbw (GB/s) per library; '-': no such row (skipped,"
  echo "# failed or not run). Load average before/after each run: $results/load.txt"
  for n in $ranks; do
    for coll in $colls; do
      echo
      echo "## $coll, $n ranks"
      local files=()
      for lib in "${active[@]}"; do
        for ((k = 1; k <= repeat; k++)); do files+=("$results/$lib.$coll.n$n.r$k.txt"); done
      done
      awk -v libs="${active[*]}" '
        function median(list,    v, m, i, j, x) {  # list: space-separated numbers
          m = split(list, v, " ")
          for (i = 2; i <= m; i++) {  # insertion sort (mawk has no asort)
            x = v[i] + 0
            for (j = i - 1; j >= 1 && v[j] + 0 > x; j--) v[j + 1] = v[j]
            v[j + 1] = x
          }
          if (m % 2) return v[(m + 1) / 2] + 0
          return (v[m / 2] + v[m / 2 + 1]) / 2
        }
        BEGIN { nl = split(libs, L, " "); for (i = 1; i <= nl; i++) idx[L[i]] = i }
        FNR == 1 { f = FILENAME; sub(/.*\//, "", f); sub(/\..*/, "", f); li = idx[f] }
        /^ +[0-9]+ +[0-9]+ / {
          size = $1
          if (!(size in seen)) { seen[size] = 1; order[++ns] = size }
          t[li, size] = t[li, size] " " $6; b[li, size] = b[li, size] " " $8
        }
        /^# Avg bus bandwidth/ { avg[li] = avg[li] " " $NF }
        END {
          printf "%12s", "size (B)"
          for (i = 1; i <= nl; i++) printf "  %21s", L[i] "  "
          printf "\n"
          printf "%12s", ""
          for (i = 1; i <= nl; i++) printf "  %21s", "time(us) busbw"
          printf "\n"
          for (k = 1; k <= ns; k++) {
            s = order[k]
            printf "%12s", s
            for (i = 1; i <= nl; i++) {
              if ((i, s) in t) printf "  %14.2f %6.2f", median(t[i, s]), median(b[i, s])
              else printf "  %21s", "-"
            }
            printf "\n"
          }
          printf "%12s", "avg busbw"
          for (i = 1; i <= nl; i++) {
            if (i in avg) printf "  %21.3f", median(avg[i])
            else printf "  %21s", "-"
          }
          printf "\n"
        }' "${files[@]}" 2>/dev/null
    done
  done
}
if ((summary_only)); then
  active=()
  for lib in $libs; do
    ls "$results/$lib."*.txt >/dev/null 2>&1 && active+=("$lib")
  done
  perf_flags=("(see the tables)")
  total="(earlier)"
  summarize
  exit 0
fi
build_all
run_all
summarize >"$results/summary.txt"
echo
cat "$results/summary.txt"
echo
echo "== tables in $results/ (one per library, collective and rank count)"
