#!/usr/bin/env bash
# Runs every example the way the README shows and checks what it prints.
set -uo pipefail
tuttirun=$1 spawn_hello=$2 hello_env=$3 groups=$4 send_recv=$5 isend_irecv=$6
broadcast=$7 reduce=$8 scatter=$9 gather=${10} all_reduce=${11} all_gather=${12} reduce_scatter=${13} barrier=${14}
fail=0
expect() {  # expect NAME OUTPUT PATTERN [COUNT]
  local n
  n=$(grep -cE -- "$3" <<<"$2")
  if [[ $n -ne ${4:-1} ]]; then
    echo "FAIL $1: expected ${4:-1} line(s) matching /$3/, got $n"
    fail=1
  fi
}
run() {  # run NAME CMD...: output in $out, fails the test on non-zero exit
  local name=$1
  shift
  out=$(timeout 120 "$@" 2>&1)
  local rc=$?
  echo "== $name (exit $rc)"
  echo "$out"
  [[ $rc -eq 0 ]] || { echo "FAIL $name: exit $rc"; fail=1; }
}

run spawn_hello "$spawn_hello"
for r in 0 1 2 3; do expect spawn_hello "$out" "^A0 B1 - rank: $r$"; done

run hello_env "$tuttirun" -n 4 "$hello_env"
for r in 0 1 2 3; do expect hello_env "$out" "^\[rank $r\] hello from rank $r of 4 \(local rank $r of 4\)$"; done

run groups "$groups"
for r in 0 1 2 3; do expect groups "$out" "^rank $r: group of all ranks has size 4, my rank there is $r$"; done
expect groups "$out" "^rank 0: in group \[0, 2\] as rank 0 of 2$"
expect groups "$out" "^rank 2: in group \[0, 2\] as rank 1 of 2$"
expect groups "$out" "^rank [13]: rank [13] is not a member of new_group\(\[0, 2\]\)$" 2

for prog in send_recv isend_irecv; do
  run $prog "$tuttirun" -n 2 "${!prog}"
  expect $prog "$out" "^\[rank 1\] rank 1 before: tensor\(\[\[0.0000, 0.0000\],$"
  sent=$(grep -A1 -E '^\[rank 0\] rank 0 sen' <<<"$out" | sed -E 's/^\[rank [01]\] //; s/^rank 0 sen[dt]s?: //')
  got=$(grep -A1 -E '^\[rank 1\] rank 1 after' <<<"$out" | sed -E 's/^\[rank [01]\] //; s/^rank 1 after: //')
  if [[ -z $sent || "$sent" != "$got" ]]; then
    echo "FAIL $prog: rank 1 received [$got], rank 0 sent [$sent]"
    fail=1
  fi
done

run broadcast "$tuttirun" -n 4 "$broadcast"
first=$(grep -A1 -E '^\[rank 0\] rank 0: tensor' <<<"$out" | sed -E 's/^\[rank [0-9]\] //; s/^rank [0-9]: //')
for r in 1 2 3; do
  other=$(grep -A1 -E "^\[rank $r\] rank $r: tensor" <<<"$out" | sed -E 's/^\[rank [0-9]\] //; s/^rank [0-9]: //')
  [[ -n $first && "$other" == "$first" ]] || { echo "FAIL broadcast: rank $r has [$other], rank 0 [$first]"; fail=1; }
done

run reduce "$tuttirun" -n 4 "$reduce"
expect reduce "$out" "^\[rank 0\] rank 0 after reduce: tensor\(\[\[6.0000, 6.0000\],$"
expect reduce "$out" "^\[rank 0\]         \[6.0000, 6.0000\]\]\)$"

run scatter "$tuttirun" -n 4 "$scatter"
for r in 0 1 2 3; do expect scatter "$out" "^\[rank $r\] rank $r received $(( (r + 1) * 10 )).0$"; done

run gather "$tuttirun" -n 4 "$gather"
expect gather "$out" "^\[rank 0\] rank 0 gathered \[0.0, 1.0, 2.0, 3.0\]$"

run all_reduce "$tuttirun" -n 4 "$all_reduce"
for r in 0 1 2 3; do expect all_reduce "$out" "^\[rank $r\] rank $r: tensor\(\[\[6.0000, 6.0000\],$"; done

run all_gather "$tuttirun" -n 4 "$all_gather"
for r in 0 1 2 3; do expect all_gather "$out" "^\[rank $r\] rank $r: \[0.0, 1.0, 2.0, 3.0\]$"; done

run reduce_scatter "$tuttirun" -n 4 "$reduce_scatter"
v=6
for r in 0 1 2 3; do expect reduce_scatter "$out" "^\[rank $r\] rank $r: $v.0$"; v=$((v * 10)); done

# Nobody passes before rank 0 (which sleeps 1 s) arrives; a loaded machine may take longer.
run barrier "$tuttirun" -n 4 "$barrier"
for r in 0 1 2 3; do expect barrier "$out" "^\[rank $r\] rank $r passed the barrier after (0\.9|[1-9]\.[0-9]) s$"; done

# The launcher refuses a program that is not there, and says so.
out=$("$tuttirun" -n 2 /nonexistent/program 2>&1)
rc=$?
[[ $rc -ne 0 ]] || { echo "FAIL: tuttirun of a missing program exited 0"; fail=1; }

[[ $fail -eq 0 ]] && echo "all examples behaved"
exit $fail
