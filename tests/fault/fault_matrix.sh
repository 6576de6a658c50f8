#!/usr/bin/env bash
# fault_matrix: how tutti behaves when a rank or the network fails, one table row per case.
#
#   bazel build //tests/fault:all && bash tests/fault/fault_matrix.sh [FAULT_RANK]
#   bazel test //tests/fault:fault_matrix --test_output=all    (tagged manual: not part of //...)
#
# 4 ranks of fault_rank (float32 sum all_reduces, every element checked) with TUTTI_TIMEOUT=5 and
# TUTTI_STORE_TIMEOUT=5; rank 1 is the culprit in every case. shm cases run all ranks in one
# network namespace (loopback); tcp cases put each rank on its own "host", a namespace with one
# veth (fmvethI, 10.99.N.I/24) on a bridge that lives in a namespace of its own, as
# tests/multihost/multihost_test.sh does. 10.99.0.0/16 is blackholed in the root namespace before
# any host exists, every rank runs inside a namespace this script made, and a trap kills every
# process and deletes every namespace it made. Without root or namespaces: "SKIP: ...", exit 0.
#
# Columns: t_err is, per rank, the seconds from the fault (or from the start of the call that
# failed, if later: the idle cases call after the fault) to the error; "ok" = no error; "killed" =
# the culprit; values in () are not judged. "names" says whether each error names the culprit
# (rank 1; for rank 1 itself, any peer). "correct": no completed all_reduce returned a wrong
# element on any rank. Expectations, per row:
#   dead     every survivor errors within FAST s naming rank 1 (death is noticed, not timed out)
#   init     every survivor errors within TUTTI_STORE_TIMEOUT + MARGIN s naming rank 1
#   timeout  every rank errors within TUTTI_TIMEOUT + MARGIN s (stop, partition: named by the
#            heartbeat after TUTTI_HEARTBEAT_TIMEOUT; a partition may also be noticed at the
#            timeout; whether errors name rank 1 is shown, not judged: a rank waiting on another
#            survivor may time out first and blame that one)
#   stop     survivors as timeout; rank 1 only has to end once continued after they did
#   reset    survivors as dead; rank 1 errors within TUTTI_TIMEOUT + MARGIN s
#   ok       every rank finishes without error
# and always: results correct, every rank that reported also released its communicator (EXIT),
# and ranks reach each other over the transport of the row. Exit 1 if any row fails.
# FAULT_MATRIX_OUT=FILE also writes the table and the details there; FAULT_MATRIX_ONLY="8 10"
# runs only those rows (numbers as in the full table).
set -uo pipefail
export PATH=$PATH:/usr/sbin:/sbin

TO=5          # TUTTI_TIMEOUT and TUTTI_STORE_TIMEOUT for every rank
HB=4          # TUTTI_HEARTBEAT_TIMEOUT: a stopped or cut-off rank is named within ~4 s (a 2 s link
              # flap plus TCP's retransmission backoff must stay below it)
MARGIN=3      # slack on top of a timeout (2 shared cores)
FAST=2        # a death or reset must be noticed within this, well below the timeout
WS=4          # ranks; rank 1 is the culprit
LIMIT=40      # hard limit per rank process
P=fm$$        # namespaces ${P}sw (the bridge), ${P}h1..${P}h4
N=$((1 + ($$ / 7) % 250))
DEV=fmveth
SUBNET=10.99.0.0/16
SECRET=fm-$$-$RANDOM$RANDOM
work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/fault_matrix.XXXXXX")
t_start=$(date +%s.%N)

skip() {
  echo "SKIP: network namespaces not available here ($*)"
  exit 0
}
[[ $(id -u) == 0 ]] || skip "not root"
for tool in ip iptables timeout awk; do
  command -v $tool >/dev/null || skip "no '$tool' command; tools/setup.sh installs it"
done
prog=${1:-bazel-bin/tests/fault/fault_rank}
prog=$(realpath "$prog" 2>/dev/null) && [[ -x $prog ]] ||
  { echo "FAIL: no fault_rank at '${1:-bazel-bin/tests/fault/fault_rank}': bazel build //tests/fault:all first"; exit 1; }

made=() # namespaces this run made
bg=()   # background jobs of the current case
cleanup() {
  local p ns
  for p in "${bg[@]}"; do kill -KILL "$p" 2>/dev/null; done
  for ns in "${made[@]}"; do
    for p in $(ip netns pids "$ns" 2>/dev/null); do kill -CONT "$p" 2>/dev/null; kill -KILL "$p" 2>/dev/null; done
    ip netns del "$ns" 2>/dev/null
  done
  made=()
  rm -rf "$work"
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

ns() { echo "${P}h$1"; }
addr() { echo "10.99.$N.$1"; }
inns() { local i=$1; shift; ip netns exec "$(ns $i)" "$@"; }
setup() {
  ip -n ${P}sw link add br0 type bridge && ip -n ${P}sw link set br0 up || return 1
  for ((i = 1; i <= WS; i++)); do
    ip netns add "$(ns $i)" || return 1
    made+=("$(ns $i)")
    ip -n ${P}sw link add p$i type veth peer name $DEV$i netns "$(ns $i)" &&
      ip -n ${P}sw link set p$i master br0 up &&
      ip -n "$(ns $i)" addr add "$(addr $i)/24" dev $DEV$i &&
      ip -n "$(ns $i)" link set lo up &&
      ip -n "$(ns $i)" link set $DEV$i up || return 1
  done
}
setup || { echo "FAIL: could not set up the test hosts"; exit 1; }
inns 1 iptables -S >/dev/null 2>&1 || skip "iptables does not work inside a namespace"
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN{printf "%.1f", b-a}'; }
echo "hosts ${P}h1..${P}h$WS at $(addr 1)..$(addr $WS) up; fault_rank: $prog"

# ---- running one case -------------------------------------------------------------------------
# launch C R ARGS...: rank R of case C in the background; output in $work/C.R.
launch() {
  local c=$1 r=$2 host lr lws maddr
  shift 2
  if [[ $TRANSPORT == shm ]]; then host=1 lr=$r lws=$WS maddr=127.0.0.1; else host=$((r + 1)) lr=0 lws=1 maddr=$(addr 1); fi
  (
    timeout -k 2 $LIMIT ip netns exec "$(ns $host)" env RANK=$r WORLD_SIZE=$WS LOCAL_RANK=$lr \
      LOCAL_WORLD_SIZE=$lws MASTER_ADDR=$maddr MASTER_PORT=$PORT TUTTI_SECRET=$SECRET TUTTI_TIMEOUT=$TO TUTTI_HEARTBEAT_TIMEOUT=$HB \
      TUTTI_STORE_TIMEOUT=$TO TUTTI_SOCKET_IFNAME=$DEV "$prog" "$@" >"$work/$c.$r" 2>&1
    echo $? >"$work/$c.$r.rc"
  ) &
  bg+=($!)
}
# count C PATTERN: lines of case C's output (all ranks) matching PATTERN.
count() { cat "$work/$1".[0-9] 2>/dev/null | grep -c -- "$2"; }
# await C PATTERN N SECONDS: waits until N lines match; 1 if they did not in time.
await() {
  local k
  for ((k = 0; k < $4 * 20; k++)); do
    [[ $(count "$1" "$2") -ge $3 ]] && return 0
    sleep 0.05
  done
  return 1
}
field() { sed -n "s/.*\b$2=\([^ ]*\).*/\1/p" <<<"${1%% msg=*}"; } # field LINE NAME (not in msg)
pid_of() { field "$(grep -h '^START' "$work/$1.$2")" pid; }
finish() {
  local p
  for p in "${bg[@]}"; do wait "$p"; done
  bg=()
}
net_reset() { # every host's rules and links as set up
  local i
  for ((i = 1; i <= WS; i++)); do
    inns $i iptables -F INPUT
    inns $i iptables -F OUTPUT
    inns $i ip link set $DEV$i up gso_max_size 65536 gso_max_segs 65535 2>/dev/null || inns $i ip link set $DEV$i up
  done
}

rows=()    # table rows
details=() # per-rank messages
failed=0
PORT=29600
case_no=0
# start C ARGS...: all ranks of case C with fault_rank ARGS; waits until every rank is READY.
start() {
  local c=$1 r
  shift
  for ((r = WS - 1; r >= 0; r--)); do launch "$c" $r "$@"; done
  await "$c" '^READY' $WS 20 || echo "   not every rank got READY within 20 s"
}

# judge C TRANSPORT TITLE KIND T_FAULT: evaluates case C and appends its row.
judge() {
  local c=$1 tr=$2 title=$3 kind=$4 tf=$5 r line st tcall tend terr why="" times=() names=() correct=yes
  local bound=$FAST victim=judged
  case $kind in
    init) bound=$((TO + MARGIN)) ;;
    timeout | stop) bound=$((TO + MARGIN)) ;;
  esac
  for ((r = 0; r < WS; r++)); do
    line=$(grep -h '^RESULT' "$work/$c.$r" 2>/dev/null | head -1)
    rc=$(cat "$work/$c.$r.rc" 2>/dev/null || echo '?')
    st=$(field "$line" status)
    msg=$(sed -n 's/.*msg="\(.*\)"$/\1/p' <<<"$line")
    [[ -n $line ]] && details+=("$c rank $r: $st, phase $(field "$line" phase), $(field "$line" ops) ops${msg:+: $msg}")
    if [[ $r == 1 && ($kind == dead || $kind == init) ]]; then
      times+=(killed) names+=(-)
      [[ -z $line ]] || why+="rank 1 reported after kill -9; "
      continue
    fi
    if [[ -z $line ]]; then
      times+=("none(rc=$rc)") names+=(-)
      why+="rank $r ended without a result (exit $rc: 124/137 = killed at the ${LIMIT} s limit); "
      continue
    fi
    [[ $(field "$line" correct) == yes ]] || { correct=no; why+="rank $r got a wrong result; "; }
    grep -q "^EXIT rank=$r " "$work/$c.$r" || why+="rank $r did not release its communicator (exit $rc); "
    if [[ $st == ok ]]; then
      times+=(ok) names+=(-)
      [[ $kind == ok ]] || why+="rank $r saw no error; "
      continue
    fi
    tcall=$(field "$line" t_call) tend=$(field "$line" t_end)
    terr=$(awk -v f="$tf" -v c="$tcall" -v e="$tend" 'BEGIN{s = c > f ? c : f; printf "%.2f", e - s}')
    if [[ $r == 1 ]]; then
      grep -qE 'rank ([02-9]|[1-9][0-9])([^0-9]|$)' <<<"${msg#*rank 1: }" && names+=(y) || names+=(n)
    else
      grep -qE 'rank(\(s\))? ([0-9]+,? )*1([^0-9]|$)' <<<"$msg" && names+=(y) || names+=(n)
    fi
    if [[ $kind == ok ]]; then
      times+=("$terr") why+="rank $r failed: $msg; "
    elif [[ $r == 1 && $kind == stop ]]; then
      times+=("($terr)") # continued after the others ended: only has to end
    else
      local b=$bound
      [[ $r == 1 && $kind == reset ]] && b=$((TO + MARGIN))
      times+=("$terr")
      awk -v t="$terr" -v b="$b" 'BEGIN{exit !(t <= b)}' || why+="rank $r took $terr s (> $b); "
      [[ $r == 1 || $kind == timeout || $kind == stop || ${names[-1]} == y ]] ||
        why+="rank $r's error does not name rank 1; "
    fi
  done
  # Transports: every READY line lists self and the row's transport only.
  for line in $(grep -h '^READY' "$work/$c".[0-9] | sed 's/.*transports=//'); do
    [[ $(tr ',' '\n' <<<"$line" | grep -vxE "self|$tr") == "" ]] || why+="transports $line, expected $tr; "
  done
  local notes=""
  [[ $kind == ok ]] && notes="$(grep -h '^RESULT rank=0 ' "$work/$c.0" | sed -n 's/.*ops=\([0-9]*\) secs=\([0-9.]*\).*/\1 all_reduces in \2 s/p')"
  [[ -n ${EXTRA_NOTE:-} ]] && notes+="${notes:+; }$EXTRA_NOTE"
  local verdict=PASS
  if [[ -n $why ]]; then verdict=FAIL failed=1 notes+="${notes:+; }${why%; }"; fi
  local IFS=/
  rows+=("| $case_no | $title | $tr | ${times[*]} | ${names[*]} | $correct | $verdict | $notes |")
  echo "   $verdict: t_err ${times[*]}, names ${names[*]}, correct $correct${why:+ -- ${why%; }}"
}

# run_case TRANSPORT TITLE KIND MODE FAULT [fault_rank args...]
#   FAULT: kill-init | kill | stop | link | partition | reset | loss:P
run_case() {
  local tr=$1 title=$2 kind=$3 mode=$4 fault=$5 c t0 tf v lead=1
  shift 5
  TRANSPORT=$tr PORT=$((PORT + 1)) case_no=$((case_no + 1)) EXTRA_NOTE=""
  c=c$case_no
  [[ -z ${FAULT_MATRIX_ONLY:-} || " $FAULT_MATRIX_ONLY " == *" $case_no "* ]] || return 0
  t0=$(now)
  echo "== $case_no. $title ($tr)"
  [[ $tr == tcp ]] && net_reset
  if [[ $fault == kill-init ]]; then
    # Ranks 0 and 1 start; once rank 1 is in init (waiting for ranks 2 and 3 to join) it dies,
    # then 2 and 3 start.
    launch $c 0 --mode $mode "$@"
    launch $c 1 --mode $mode "$@"
    await $c '^START rank=1 ' 1 10
    sleep 0.5
    tf=$(now)
    kill -KILL "$(pid_of $c 1)"
    launch $c 2 --mode $mode "$@"
    launch $c 3 --mode $mode "$@"
  else
    start $c --mode $mode "$@"
    [[ $mode == idle ]] && lead=0.5
    sleep $lead
    v=$(pid_of $c 1)
    tf=$(now)
    case $fault in
      kill) kill -KILL "$v" ;;
      stop) kill -STOP "$v" ;;
      link)
        inns 2 ip link set ${DEV}2 down
        sleep 2
        inns 2 ip link set ${DEV}2 up
        EXTRA_NOTE="rank 1's link down for 2 s"
        ;;
      partition)
        inns 2 iptables -I INPUT -i ${DEV}2 -j DROP
        inns 2 iptables -I OUTPUT -o ${DEV}2 -j DROP
        ;;
      reset) inns 2 iptables -I INPUT -i ${DEV}2 -p tcp -j REJECT --reject-with tcp-reset ;;
      loss:*)
        # Every host drops P% of the packets it sends, one packet at a time (no GSO batches).
        local p=${fault#loss:} i
        for ((i = 1; i <= WS; i++)); do
          inns $i ip link set $DEV$i gso_max_size 1500 gso_max_segs 1 2>/dev/null
          inns $i iptables -A OUTPUT -o $DEV$i -m statistic --mode random \
            --probability "$(awk -v p="$p" 'BEGIN{printf "%.4f", p / 100}')" -j DROP
        done
        ;;
    esac
  fi
  if [[ $fault == stop ]]; then
    # Rank 1 stays stopped until the others have ended (or their limit), then continues.
    local k
    for ((k = 0; k < 20 * (TO + MARGIN + 10); k++)); do
      [[ $(count $c '^RESULT') -ge $((WS - 1)) ]] && break
      sleep 0.05
    done
    kill -CONT "$v"
  fi
  if [[ $fault == partition ]]; then
    await $c '^RESULT' $WS $((TO + MARGIN + 10))
  fi
  finish
  if [[ $fault == loss:* ]]; then
    local drops=0 i d
    for ((i = 1; i <= WS; i++)); do
      d=$(inns $i iptables -L OUTPUT -v -x -n | awk '/statistic/ {print $1}')
      drops=$((drops + ${d:-0}))
    done
    EXTRA_NOTE="$drops packets dropped"
  fi
  judge $c $tr "$title" $kind "$tf"
  # shm segments left in /dev/shm by this case's ranks (named after their creator's pid): noted
  # (a killed rank cannot remove its own; a survivor should) and removed.
  local r pid f
  for ((r = 0; r < WS; r++)); do
    pid=$(pid_of $c $r)
    [[ -n $pid ]] || continue
    for f in /dev/shm/tutti-"$pid"-*; do
      [[ -e $f ]] || continue
      echo "   note: rank $r (pid $pid$([[ $r == 1 && $fault == kill* ]] && echo ', killed')) left $f ($(stat -c %s "$f") bytes); removed"
      rm -f "$f"
    done
  done
  echo "   ($(elapsed $t0) s)"
}

# ---- the matrix -------------------------------------------------------------------------------
for tr in shm tcp; do
  run_case $tr "kill -9 during init" init init kill-init
  run_case $tr "kill -9 while idle" dead idle kill --idle 4
  run_case $tr "kill -9 mid small all_reduce" dead small kill --seconds 20
  run_case $tr "kill -9 mid 64 MiB all_reduce" dead large kill --seconds 20
  run_case $tr "SIGSTOP mid small all_reduce" stop small stop --seconds 20
done
run_case tcp "link down 2 s, then up" ok mixed link --seconds 6 --large-mib 16
run_case tcp "partition mid small all_reduce" timeout small partition --seconds 20
run_case tcp "partition while idle" timeout idle partition --idle 4
run_case tcp "TCP reset (RST to all of rank 1's traffic)" reset small reset --seconds 20
run_case tcp "1% packet loss" ok mixed loss:1 --seconds 4 --large-mib 16
run_case tcp "5% packet loss" ok mixed loss:5 --seconds 4 --large-mib 16

{
  echo
  echo "World size $WS, culprit rank 1, TUTTI_TIMEOUT=$TO, TUTTI_STORE_TIMEOUT=$TO; t_err in s per rank 0/1/2/3."
  echo
  echo "| # | case | transport | t_err (s) r0/r1/r2/r3 | names culprit | correct | verdict | notes |"
  echo "|---|---|---|---|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
  echo
  echo "Details (the Status each rank ended with):"
  echo
  printf -- '- %s\n' "${details[@]}"
} | tee ${FAULT_MATRIX_OUT:+"$FAULT_MATRIX_OUT"}
echo
echo "total $(elapsed $t_start) s"
((failed == 0)) && echo "PASS: every case met its expectation" || echo "FAIL: some cases did not meet their expectation"
exit $failed
