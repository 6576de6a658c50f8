#!/usr/bin/env bash
# multihost_test: tutti across "hosts" made of network namespaces on this machine.
#
#   multihost_test.sh TUTTIRUN MULTIHOST_P2P
#
# Each host is a network namespace with lo and one veth (tmvethI, 10.99.N.I/24) whose other end
# sits on a bridge in a namespace of its own, so the root namespace gets no new interface. Every
# rank runs inside a host namespace; nothing here connects from the root namespace to a test
# address, and 10.99.0.0/16 is blackholed in the root namespace before any host exists, so
# nothing sent there from the root namespace can leave the machine. A trap deletes every
# namespace this run made (the blackhole route stays).
#
#   a. 2 hosts x 2 ranks: shm inside a host, tcp across, all sizes, every byte checked.
#   b. 4 hosts x 1 rank over TUTTI_SOCKET_IFNAME=tmveth, host 2 limited to 1 Gbit/s (tbf),
#      host 3 dropping 1% of its packets (iptables): same exchanges, same checks.
#   c. 3 hosts x 1 rank, TUTTI_TIMEOUT=6: after a first round every rank waits for a message from
#      the next one that never comes, and host 3's link goes down. Every rank must exit well
#      within 30 s; ranks 0 and 1 with an error naming the ranks involved.
#
# Needs root and network namespaces; prints "SKIP: ..." and passes without them.
set -uo pipefail
export PATH=$PATH:/usr/sbin:/sbin

work=${TEST_TMPDIR:-$(mktemp -d)}
P=tm$$                                 # namespaces: ${P}sw (the bridge), ${P}h1..${P}h4
N=$((1 + $$ % 250))                    # subnet 10.99.N.0/24: apart from other runs and netns-lab
DEV=tmveth                             # interface prefix inside each host
SUBNET=10.99.0.0/16
SECRET=mh-$$-$RANDOM$RANDOM
HOSTS=4
t_start=$(date +%s.%N)

skip() {
  echo "SKIP: network namespaces not available here ($*)"
  exit 0
}
[[ $(id -u) == 0 ]] || skip "not root"
for tool in ip tc iptables timeout; do
  command -v $tool >/dev/null || skip "no '$tool' command; tools/setup.sh installs it"
done

fail=0
FAIL() {
  echo "FAIL: $*"
  fail=1
}
elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}'; }

made=()    # namespaces this run made, deleted by the trap
bg=()      # background jobs this run started
cleanup() {
  local p ns
  for p in "${bg[@]}"; do kill -KILL "$p" 2>/dev/null; done
  for ns in "${made[@]}"; do
    for p in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
    ip netns del "$ns" 2>/dev/null
  done
  made=()
}
trap cleanup EXIT
trap 'echo "interrupted"; exit 1' INT TERM HUP

# The root namespace must never route test addresses anywhere: blackhole them first.
if ! ip route show type blackhole | grep -q "^blackhole $SUBNET"; then
  why=$(ip route add blackhole $SUBNET 2>&1) || skip "cannot add the blackhole route for $SUBNET: $why"
fi
ip route show type blackhole | grep -q "^blackhole $SUBNET" || skip "no blackhole route for $SUBNET"

why=$(ip netns add ${P}sw 2>&1) || skip "ip netns add failed: $why"
made+=(${P}sw)

tuttirun=$(realpath "$1") && prog=$(realpath "$2") && [[ -x $tuttirun && -x $prog ]] ||
  { echo "FAIL: usage: $0 TUTTIRUN MULTIHOST_P2P (got '$1' '$2')"; exit 1; }

ns() { echo "${P}h$1"; }
addr() { echo "10.99.$N.$1"; }
inns() {  # inns I CMD...: run CMD inside host I
  local i=$1
  shift
  ip netns exec "$(ns $i)" "$@"
}
setup() {
  ip -n ${P}sw link add br0 type bridge || return 1
  ip -n ${P}sw link set br0 up || return 1
  for ((i = 1; i <= HOSTS; i++)); do
    ip netns add "$(ns $i)" || return 1
    made+=("$(ns $i)")
    ip -n ${P}sw link add p$i type veth peer name $DEV$i netns "$(ns $i)" || return 1
    ip -n ${P}sw link set p$i master br0 up || return 1
    ip -n "$(ns $i)" addr add "$(addr $i)/24" dev $DEV$i || return 1
    ip -n "$(ns $i)" link set lo up || return 1
    ip -n "$(ns $i)" link set $DEV$i up || return 1
  done
}
setup || { echo "FAIL: could not set up the test hosts"; exit 1; }
echo "hosts ${P}h1..${P}h$HOSTS at $(addr 1)..$(addr $HOSTS) up in $(elapsed $t_start) s"

# node CASE I ARGS...: tuttirun on host I (node I-1) in the background, output in $work/CASE.I;
# its pid goes to $bg, its exit code to $work/CASE.I.rc and the time it ended to $work/CASE.I.end.
node() {
  local c=$1 i=$2
  shift 2
  (
    timeout -k 3 "$LIMIT" ip netns exec "$(ns $i)" env $ENVS \
      "$tuttirun" --nnodes "$NODES" --node-rank $((i - 1)) --master-addr "$(addr 1)" \
      --master-port "$PORT" --secret "$SECRET" "$@" >"$work/$c.$i" 2>&1
    echo $? >"$work/$c.$i.rc"
    date +%s.%N >"$work/$c.$i.end"
  ) &
  bg+=($!)
}
# finish CASE NODES: waits for every node of CASE; prints their output; $rc[I] = exit codes.
finish() {
  local c=$1 i
  for p in "${bg[@]}"; do wait "$p"; done
  bg=()
  rc=()
  for ((i = 1; i <= $2; i++)); do
    rc[$i]=$(cat "$work/$c.$i.rc" 2>/dev/null || echo missing)
    echo "-- host $i (exit ${rc[$i]}):"
    sed 's/^/   /' "$work/$c.$i"
  done
}
# expect CASE PATTERN [COUNT]: COUNT lines (default 1) of CASE's output match PATTERN.
expect() {
  local n
  n=$(cat "$work/$1".[0-9] | grep -cE -- "$2")
  [[ $n -eq ${3:-1} ]] || FAIL "$1: expected ${3:-1} line(s) matching /$2/, got $n"
}

# ---- a. 2 hosts x 2 ranks --------------------------------------------------------------------
echo "== a: 2 hosts x 2 ranks (shm inside a host, tcp across)"
t=$(date +%s.%N)
NODES=2 PORT=29501 LIMIT=40 ENVS="TUTTI_TIMEOUT=20 TUTTI_STORE_TIMEOUT=20"
node a 2 -n 2 "$prog" --rounds 2
node a 1 -n 2 "$prog" --rounds 2
finish a 2
echo "   ($(elapsed $t) s)"
for i in 1 2; do [[ ${rc[$i]} == 0 ]] || FAIL "a: node on host $i exited ${rc[$i]}"; done
expect a '^\[rank 0\] rank 0 ok: 36 exchanges, transports \[self shm tcp tcp\], '
expect a '^\[rank 1\] rank 1 ok: 36 exchanges, transports \[shm self tcp tcp\], '
expect a '^\[rank 2\] rank 2 ok: 36 exchanges, transports \[tcp tcp self shm\], '
expect a '^\[rank 3\] rank 3 ok: 36 exchanges, transports \[tcp tcp shm self\], '

# ---- b. 4 hosts x 1 rank, rate limit and loss ------------------------------------------------
echo "== b: 4 hosts x 1 rank over $DEV*, host 2 at 1gbit (tbf), host 3 losing 1% of its packets"
inns 2 tc qdisc add dev ${DEV}2 root tbf rate 1gbit burst 256kb latency 50ms || FAIL "b: tc tbf on host 2"
# Per-packet loss: no segmentation offloads, so one dropped skb is one dropped packet.
if command -v ethtool >/dev/null; then
  inns 3 ethtool -K ${DEV}3 tso off gso off gro off >/dev/null 2>&1
fi
inns 3 ip link set ${DEV}3 gso_max_size 1500 gso_max_segs 1 2>/dev/null
inns 3 iptables -A OUTPUT -o ${DEV}3 -m statistic --mode random --probability 0.01 -j DROP ||
  FAIL "b: iptables loss on host 3"
t=$(date +%s.%N)
NODES=4 PORT=29502 LIMIT=45 ENVS="TUTTI_TIMEOUT=30 TUTTI_STORE_TIMEOUT=20 TUTTI_SOCKET_IFNAME=$DEV"
for i in 4 3 2 1; do node b $i -n 1 "$prog" --rounds 2; done
finish b 4
echo "   ($(elapsed $t) s)"
for i in 1 2 3 4; do [[ ${rc[$i]} == 0 ]] || FAIL "b: node on host $i exited ${rc[$i]}"; done
for r in 0 1 2 3; do
  want=(tcp tcp tcp tcp)
  want[$r]=self
  expect b "^\[rank $r\] rank $r ok: 36 exchanges, transports \[${want[*]}\], "
done
dropped=$(inns 3 iptables -L OUTPUT -v -x -n | awk '/statistic/ {print $1}')
shaped=$(inns 2 tc -s qdisc show dev ${DEV}2 | awk '/Sent/ {print $2; exit}')
echo "   host 3 dropped ${dropped:-?} packets; host 2's tbf passed ${shaped:-?} bytes"
[[ ${dropped:-0} -gt 0 ]] || FAIL "b: the loss rule on host 3 dropped nothing"
[[ ${shaped:-0} -gt 100000000 ]] || FAIL "b: host 2's tbf passed only ${shaped:-0} bytes"
inns 2 tc qdisc del dev ${DEV}2 root
inns 3 iptables -F OUTPUT

# ---- c. a link goes down while every rank waits ---------------------------------------------
echo "== c: 3 hosts x 1 rank, TUTTI_TIMEOUT=6; host 3's link goes down while every rank waits"
NODES=3 PORT=29503 LIMIT=30 ENVS="TUTTI_TIMEOUT=6 TUTTI_STORE_TIMEOUT=20"
for i in 3 2 1; do node c $i -n 1 "$prog" --fault-wait; done
# Take the link down once every rank has posted its receive.
t=$(date +%s.%N)
down=""
for ((k = 0; k < 500; k++)); do  # up to 25 s
  if [[ $(cat "$work"/c.[0-9] 2>/dev/null | grep -c 'waiting for rank') -eq 3 ]]; then
    inns 3 ip link set ${DEV}3 down && down=$(date +%s.%N)
    break
  fi
  if [[ $(ls "$work"/c.*.rc 2>/dev/null | wc -l) -gt 0 ]]; then break; fi  # a node ended early
  sleep 0.05
done
[[ -n $down ]] && echo "   host 3's link down $(elapsed $t) s after the start"
finish c 3
[[ -n $down ]] || FAIL "c: the ranks never all reached the wait, so the link was not taken down"
for i in 1 2 3; do
  r=$((i - 1))
  end=$(cat "$work/c.$i.end" 2>/dev/null || date +%s.%N)
  took=$(awk -v a="${down:-$t}" -v b="$end" 'BEGIN{printf "%.1f", b-a}')
  echo "   rank $r ended ${took} s after the link went down (exit ${rc[$i]})"
  case ${rc[$i]} in
    124 | 137) FAIL "c: rank $r did not exit within 30 s (killed by timeout)" ;;
  esac
  awk -v x="$took" 'BEGIN{exit !(x < 20)}' || FAIL "c: rank $r took ${took} s to exit after the link went down"
done
for r in 0 1; do
  i=$((r + 1))
  [[ ${rc[$i]} == 0 ]] || FAIL "c: rank $r exited ${rc[$i]}, expected 0 (its receive failed with an error)"
  peer=$((r + 1))
  # The error names this rank and a rank involved: the one it waited for or the one cut off.
  expect c "^\[rank $r\] rank $r fault: receive from rank $peer failed after [0-9.]+ s: (timeout|remote error): rank $r: .*rank ($peer|2)"
  expect c "^\[rank $r\] rank $r closed the communicator in "
done
grep -q "rank 2 fault: receive from rank 0 unexpectedly succeeded" "$work"/c.3 && FAIL "c: rank 2's receive succeeded"

echo "total $(elapsed $t_start) s"
if [[ $fail -eq 0 ]]; then
  echo "PASS: multi-host exchanges (shm + tcp, rate limit, loss) and a link failure behaved"
fi
exit $fail
