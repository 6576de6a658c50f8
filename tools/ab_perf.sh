#!/usr/bin/env bash
# Compares builds or settings of tutti with each other (before/after a change): the same
# tutti_perf sweep for every variant, interleaved (repeat, ranks, collective, variant) so that
# load from other jobs hits every variant alike, then the median out-of-place time and bus
# bandwidth per size, variant beside variant.
#
#   bazel build -c opt //bench:tutti_perf //tools:tuttirun
#   cp bazel-bin/bench/tutti_perf /tmp/after_perf       # (and a build of the old commit as before)
#   bash tools/ab_perf.sh --variant before=/tmp/before_perf --variant after=/tmp/after_perf \
#        --variant worker=/tmp/after_perf,TUTTI_LOCAL_ENGINE=worker -b 64K -e 64M -f 4 -n 20 -w 5
#
# Options (everything else goes to tutti_perf, after the defaults -b 64K -e 64M -f 4):
#   --variant NAME=BINARY[,VAR=VALUE...]   a tutti_perf binary and environment (2 or more)
#   --ranks "2 4"  --colls "all_reduce all_gather reduce_scatter"  --repeat K (default 3)
#   --tuttirun PATH                        launcher (default bazel-bin/tools/tuttirun)
#   --results DIR                          raw outputs (default /tmp/tutti_ab/<date-time>)
set -uo pipefail
cd "$(dirname "$0")/.."
ranks="2 4"
colls="all_reduce all_gather reduce_scatter"
repeat=3
launcher=bazel-bin/tools/tuttirun
results=""
variants=()
perf_flags=(-b 64K -e 64M -f 4)
while (($#)); do
  case $1 in
    --variant) variants+=("$2"); shift 2 ;;
    --ranks) ranks=$2; shift 2 ;;
    --colls) colls=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --tuttirun) launcher=$2; shift 2 ;;
    --results) results=$2; shift 2 ;;
    -h | --help) sed -n '2,19s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) perf_flags+=("$1"); shift ;;
  esac
done
((${#variants[@]} >= 2)) || { echo "ab_perf: give at least two --variant NAME=BINARY[,VAR=VALUE...]" >&2; exit 2; }
[[ -x $launcher ]] || { echo "ab_perf: no launcher at $launcher (bazel build -c opt //tools:tuttirun)" >&2; exit 2; }
[[ -n $results ]] || results=${TMPDIR:-/tmp}/tutti_ab/$(date +%Y%m%d-%H%M%S)
mkdir -p "$results" || exit 1
names=()
for v in "${variants[@]}"; do
  name=${v%%=*}
  rest=${v#*=}
  bin=${rest%%,*}
  [[ -x $bin ]] || { echo "ab_perf: variant $name: $bin is not an executable" >&2; exit 2; }
  names+=("$name")
done

for ((k = 1; k <= repeat; ++k)); do
  for n in $ranks; do
    for c in $colls; do
      for v in "${variants[@]}"; do
        name=${v%%=*}
        rest=${v#*=}
        bin=${rest%%,*}
        envs=()
        [[ $rest == *,* ]] && IFS=, read -r -a envs <<<"${rest#*,}"
        out=$results/$name.$c.n$n.r$k.txt
        echo "== pass $k/$repeat: $name $c $n ranks" >&2
        env "${envs[@]}" timeout 900 "$launcher" -n "$n" "$bin" --coll "$c" "${perf_flags[@]}" >"$out" 2>&1 ||
          echo "ab_perf: $name $c $n ranks failed (see $out)" >&2
      done
    done
  done
done

# Per (ranks, collective): size, then per variant median time (us) and median busbw (GB/s).
python3 - "$results" "$repeat" "$ranks" "$colls" "${names[@]}" <<'PY' | tee "$results/summary.txt"
import re, statistics, sys
results, repeat, ranks, colls, names = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4].split(), sys.argv[5:]
row = re.compile(r"^(?:\[rank 0\]\s+)?(\d+)\s+\d+\s+\S+\s+\S+\s+\S+\s+([\d.]+)\s+[\d.]+\s+([\d.]+)\s+")
def table(path):
    rows = {}
    try:
        for line in open(path):
            m = row.match(line.strip())
            if m: rows[int(m.group(1))] = (float(m.group(2)), float(m.group(3)))
    except OSError:
        pass
    return rows
for n in ranks:
    for c in colls:
        data = {v: [table(f"{results}/{v}.{c}.n{n}.r{k}.txt") for k in range(1, repeat + 1)] for v in names}
        sizes = sorted({s for v in names for t in data[v] for s in t})
        print(f"\n{c}, {n} ranks (medians of {repeat}; time us / busbw GB/s)")
        print(f"{'bytes':>12}" + "".join(f"{v:>24}" for v in names))
        for s in sizes:
            cells = []
            for v in names:
                ts = [t[s][0] for t in data[v] if s in t]
                bs = [t[s][1] for t in data[v] if s in t]
                m = statistics.median(ts) if ts else 0
                tm = f"{m:>12.2f}" if m < 100 else f"{m:>12.1f}"  # (small calls differ by hundredths)
                cells.append(f"{tm} / {statistics.median(bs):>6.2f}" if ts else f"{'-':>24}")
            print(f"{s:>12}" + "".join(f"{x:>24}" for x in cells))
PY
