#!/usr/bin/env bash
# link_bench: collectives over a bandwidth-limited network, against the raw TCP rate of the same
# link, in one run. Hosts are network namespaces on this machine joined by a bridge; every host's
# link is limited (tbf on its egress, 1 Gbit/s by default). For each host count it measures one
# TCP stream host 2 -> host 1 (the raw one-way rate), then each collective with one rank per
# host (tutti over tcp), and prints busbw per size (from the measured time, nccl-tests'
# factors) and its ratio to the raw rate (the goal of issue 8: >= 97% from 1 MiB up).
#
#   bash bench/link_bench.sh                       # 2 and 4 hosts, 1gbit, all_reduce all_gather reduce_scatter
#   bash bench/link_bench.sh --hosts 2 --rate 500mbit --colls all_reduce -- -b 4M -e 64M
#
# Options: --hosts "2 4"   --rate 1gbit   --colls "..."   --repeat K (median of K runs, default 1)
#          --env "VAR=VALUE ..." (settings for every rank, e.g. TUTTI_CHUNK_BYTES=1048576)
#          -- FLAGS: tutti_perf flags (default -b 1M -e 64M -f 4 -n 5 -w 1)
# Needs root, iproute2 (ip, tc) and python3; builds //tools:tuttirun and //bench:tutti_perf
# (-c opt). Test traffic stays inside the namespaces: 10.99.0.0/16 is blackholed in the root
# namespace first, and every process that talks on the test network runs inside a host.
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH=$PATH:/usr/sbin:/sbin

hosts_list="2 4"
rate=1gbit
colls="all_reduce all_gather reduce_scatter"
repeat=1
extra_env=()
perf_flags=(-b 1M -e 64M -f 4 -n 5 -w 1)
while (($#)); do
  case $1 in
    --hosts) hosts_list=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --colls) colls=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --env) read -r -a extra_env <<<"$2"; shift 2 ;;
    --) shift; perf_flags=("$@"); break ;;
    -h | --help) sed -n '2,18s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "link_bench: unknown option $1" >&2; exit 2 ;;
  esac
done
[[ $(id -u) == 0 ]] || { echo "link_bench: needs root (network namespaces)" >&2; exit 2; }
for tool in ip tc python3 timeout; do
  command -v $tool >/dev/null || { echo "link_bench: needs '$tool'" >&2; exit 2; }
done

bazel build -c opt //tools:tuttirun //bench:tutti_perf >/dev/null 2>&1 ||
  { echo "link_bench: bazel build -c opt //tools:tuttirun //bench:tutti_perf failed" >&2; exit 1; }
bin=$(bazel info -c opt bazel-bin 2>/dev/null)
tuttirun=$bin/tools/tuttirun
perfs=("tutti:$bin/bench/tutti_perf")

P=lb$$
N=$((1 + $$ % 250))
DEV=lbveth
SUBNET=10.99.0.0/16
made=()
cleanup() {
  local ns p
  for ns in "${made[@]}"; do
    for p in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
    ip netns del "$ns" 2>/dev/null
  done
  made=()
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
ip route show type blackhole | grep -q "^blackhole $SUBNET" || ip route add blackhole $SUBNET ||
  { echo "link_bench: cannot blackhole $SUBNET in the root namespace" >&2; exit 1; }

ns() { echo "${P}h$1"; }
addr() { echo "10.99.$N.$1"; }
setup() {  # setup H: H hosts on a bridge, each link limited to $rate
  cleanup
  ip netns add ${P}sw && made+=(${P}sw) || return 1
  ip -n ${P}sw link add br0 type bridge && ip -n ${P}sw link set br0 up || return 1
  for ((i = 1; i <= $1; i++)); do
    ip netns add "$(ns $i)" && made+=("$(ns $i)") || return 1
    ip -n ${P}sw link add p$i type veth peer name $DEV$i netns "$(ns $i)" || return 1
    ip -n ${P}sw link set p$i master br0 up || return 1
    ip -n "$(ns $i)" addr add "$(addr $i)/24" dev $DEV$i || return 1
    ip -n "$(ns $i)" link set lo up && ip -n "$(ns $i)" link set $DEV$i up || return 1
    ip netns exec "$(ns $i)" tc qdisc add dev $DEV$i root tbf rate "$rate" burst 256kb latency 50ms || return 1
  done
}

# One TCP stream of 256 MiB from host 2 to host 1: the receiver's rate from first to last byte.
raw_rate() {
  local out=$work/raw.txt
  ip netns exec "$(ns 1)" timeout 60 python3 - "$(addr 1)" >"$out" 2>&1 <<'EOF' &
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], 29600))
s.listen(1)
c, _ = s.accept()
buf = bytearray(1 << 20)
n, t0 = 0, None
while True:
    k = c.recv_into(buf)
    if not k:
        break
    if t0 is None:
        t0 = time.time()
    n += k
print("%.1f" % (n / (time.time() - t0) / 1e6))
EOF
  local srv=$!
  sleep 0.5
  ip netns exec "$(ns 2)" timeout 60 python3 - "$(addr 1)" <<'EOF'
import socket, sys
s = socket.create_connection((sys.argv[1], 29600))
chunk = bytes(1 << 20)
for _ in range(256):
    s.sendall(chunk)
s.close()
EOF
  wait $srv
  cat "$out"
}

# busbw (MB/s, from the out-of-place time) per size of one collective: "size busbw" lines.
run_perf() {  # run_perf PERF COLL H PORT
  local perf=$1 coll=$2 h=$3 port=$4 i
  for ((i = h; i >= 1; i--)); do
    ip netns exec "$(ns $i)" env TUTTI_SOCKET_IFNAME=$DEV TUTTI_TIMEOUT=120 "${extra_env[@]}" \
      timeout -k 3 600 "$tuttirun" --nnodes "$h" --node-rank $((i - 1)) --master-addr "$(addr 1)" \
      --master-port "$port" --secret "lb$$" -n 1 "$perf" --coll "$coll" "${perf_flags[@]}" \
      >"$work/perf.$i" 2>&1 &
  done
  wait
  local factor
  case $coll in
    all_reduce) factor=$(awk -v n="$h" 'BEGIN {print 2 * (n - 1) / n}') ;;
    all_gather | reduce_scatter | all_to_all | gather | scatter) factor=$(awk -v n="$h" 'BEGIN {print (n - 1) / n}') ;;
    *) factor=1 ;;
  esac
  grep -v '#' "$work/perf.1" | awk -v f="$factor" '$1 == "[rank" && $3 ~ /^[0-9]+$/ && $8 > 0 {print $3, $3 / $8 * f}'
}

work=$(mktemp -d)
port=29700
echo "# link_bench: $rate per host link (tbf), $(nproc) cores, $(date -Is)"
echo "# perf flags: ${perf_flags[*]}; settings: ${extra_env[*]:-(defaults)}; median of $repeat run(s); busbw in MB/s; ratio = busbw / raw one-way TCP"
for h in $hosts_list; do
  setup "$h" || { echo "link_bench: could not set up $h hosts" >&2; exit 1; }
  raws=()
  for ((k = 0; k < repeat; k++)); do raws+=("$(raw_rate)"); done
  raw=$(printf '%s\n' "${raws[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  echo
  echo "## $h hosts: raw one-way TCP $raw MB/s"
  for coll in $colls; do
    for spec in "${perfs[@]}"; do
      name=${spec%%:*}
      : >"$work/all.txt"
      for ((k = 0; k < repeat; k++)); do
        port=$((port + 1))
        run_perf "${spec#*:}" "$coll" "$h" "$port" >>"$work/all.txt"
      done
      awk -v raw="$raw" -v name="$name" -v coll="$coll" '
        { v[$1] = v[$1] " " $2; if (!($1 in seen)) { seen[$1] = 1; order[++n] = $1 } }
        END {
          if (n == 0) { printf "%-6s %-15s (no results)\n", name, coll; exit }
          for (i = 1; i <= n; i++) {
            m = split(substr(v[order[i]], 2), a, " ")
            for (x = 2; x <= m; x++)  # insertion sort (mawk has no asort)
              for (y = x; y > 1 && a[y - 1] + 0 > a[y] + 0; y--) { t = a[y]; a[y] = a[y - 1]; a[y - 1] = t }
            med = a[int((m + 1) / 2)]
            printf "%-6s %-15s %10d B  %8.1f MB/s  %5.1f%%\n", name, coll, order[i], med, 100 * med / raw
          }
        }' "$work/all.txt"
    done
  done
done
rm -rf "$work"
