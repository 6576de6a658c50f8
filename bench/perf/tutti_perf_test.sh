#!/usr/bin/env bash
# tutti_perf under tuttirun: small sweeps of every collective on 2 and 3 ranks must be right
# (#wrong 0 in every row, both footers); -d all -o all runs; bad flags and algorithms fail with a
# message; and a result spoiled on purpose (--debug-corrupt-rank) must fail the run.
set -uo pipefail
tuttirun=$1 perf=$2
fail=0
colls="all_reduce all_gather reduce_scatter broadcast reduce scatter gather all_to_all send_recv"
small=(-b 8 -e 64K -f 4 -n 2 -w 1)

run() {  # run NRANKS ARGS...: output (rank prefixes removed) in $out, exit status in $rc
  local n=$1
  shift
  out=$(timeout 300 "$tuttirun" -n "$n" "$perf" "$@" 2>&1 | sed -E 's/^\[rank [0-9]+\] //')
  rc=${PIPESTATUS[0]}
}
bad() {
  echo "FAIL: $*"
  echo "$out" | tail -40
  fail=1
}
rows() { grep -E '^ +[0-9]+ +[0-9]+ ' <<<"$out"; }
# check_rows WHAT EXPECTED_ROWS: every row has 13 fields, numbers in the timing columns and
# #wrong 0 (or "-" in the in-place half of send_recv); both footers are there and say OK.
check_rows() {
  local what=$1 want=$2 got
  got=$(rows | wc -l)
  [[ $got -eq $want ]] || bad "$what: $got rows, expected $want"
  local badrows
  badrows=$(rows | awk '
    NF != 13 { print; next }
    $6 !~ /^[0-9.]+$/ || $7 !~ /^[0-9.]+$/ || $8 !~ /^[0-9.]+$/ || $9 != "0" { print; next }
    !($10 == "-" && $11 == "-" && $12 == "-" && $13 == "-") &&
      ($10 !~ /^[0-9.]+$/ || $11 !~ /^[0-9.]+$/ || $12 !~ /^[0-9.]+$/ || $13 != "0") { print }')
  [[ -z $badrows ]] || bad "$what: bad rows:"$'\n'"$badrows"
  grep -qE '^# Out of bounds values : 0 OK$' <<<"$out" || bad "$what: no '# Out of bounds values : 0 OK'"
  grep -qE '^# Avg bus bandwidth    : [0-9.e+-]+$' <<<"$out" || bad "$what: no '# Avg bus bandwidth' footer"
  grep -qE '^#\s+size\s+count\s+type\s+redop\s+root\s+time\s+algbw\s+busbw\s+#wrong\s+time\s+algbw\s+busbw\s+#wrong$' \
    <<<"$out" || bad "$what: no column header"
}

# Every collective, 2 and 3 ranks (and 1, the degenerate case); the rooted ones with the last
# rank as root.
for n in 1 2 3; do
  for coll in $colls; do
    run "$n" --coll "$coll" "${small[@]}" -r $((n - 1))
    echo "== $coll on $n ranks: exit $rc, $(rows | wc -l) rows"
    [[ $rc -eq 0 ]] || bad "$coll on $n ranks exited $rc"
    check_rows "$coll on $n ranks" 7
    if [[ $coll == send_recv ]]; then
      [[ $(rows | awk '$10 == "-"' | wc -l) -eq 7 ]] || bad "send_recv: in-place columns should be '-'"
    fi
  done
done

# The figures follow the definitions: size, count, busbw = algbw x factor.
run 3 --coll all_gather -b 96 -e 96 -n 2 -w 1
row=$(rows | head -1)
read -r size count type redop root t algbw busbw wrong _ <<<"$row"
[[ $size == 96 && $count == 8 && $type == float32 && $redop == - && $root == - ]] ||
  bad "all_gather 96 B on 3 ranks: expected size 96, count 8 (per rank), got: $row"
run 4 -b 1M -e 1M -n 2 -w 1
read -r size count type redop root t algbw busbw wrong _ <<<"$(rows | head -1)"
awk -v t="$t" -v a="$algbw" -v b="$busbw" 'BEGIN {
  ea = 1048576 / t / 1e3; eb = a * 1.5;
  exit !((a - ea < 0.011 && ea - a < 0.011) && (b - eb < 0.011 && eb - b < 0.011)) }' ||
  bad "all_reduce 1M on 4 ranks: algbw/busbw $algbw/$busbw do not match time $t us"
[[ $count == 262144 ]] || bad "all_reduce 1M: count $count"

# All types and ops.
for n in 2 3; do
  run "$n" -d all -o all -b 8 -e 4K -f 8 -n 2 -w 1
  echo "== all_reduce -d all -o all on $n ranks: exit $rc, $(rows | wc -l) rows"
  [[ $rc -eq 0 ]] || bad "-d all -o all on $n ranks exited $rc"
  check_rows "-d all -o all on $n ranks" $(((12 * 6 + 6 * 3) * 4))  # band/bor/bxor: 6 integer types
done
run 2 --coll reduce_scatter -d all -o all -b 64 -e 4K -f 8 -n 1 -w 0
[[ $rc -eq 0 ]] || bad "reduce_scatter -d all -o all exited $rc"
check_rows "reduce_scatter -d all -o all" $(((12 * 6 + 6 * 3) * 3))

# Other flags: additive steps, -a 0/2/3, -c 0, -z, -T, named algorithms.
run 2 -b 8 -e 32 -i 8 -n 1 -w 0
[[ $rc -eq 0 && $(rows | awk '{print $1}' | tr '\n' ' ') == "8 16 24 32 " ]] || bad "-i 8: sizes $(rows | awk '{print $1}' | tr '\n' ' ')"
for a in 0 2 3; do
  run 2 -b 1K -e 1K -n 2 -w 1 -a "$a" -z 1 -T 60
  [[ $rc -eq 0 ]] || bad "-a $a exited $rc"
  check_rows "-a $a" 1
done
run 2 -b 1K -e 4K -f 2 -n 1 -w 0 -c 0
[[ $rc -eq 0 && $(rows | awk '$9 == "N/A" && $13 == "N/A"' | wc -l) -eq 3 ]] || bad "-c 0: expected N/A in #wrong"
for spec in all_reduce:ring all_reduce:tree all_reduce:rhd all_reduce:doubling all_gather:bruck all_gather:ring reduce_scatter:rhd \
    broadcast:binomial broadcast:ring gather:binomial scatter:binomial all_to_all:pairwise; do
  run 3 --coll "${spec%%:*}" --algo "${spec##*:}" "${small[@]}" -r 1
  [[ $rc -eq 0 ]] || bad "--coll ${spec%%:*} --algo ${spec##*:} exited $rc"
  check_rows "$spec" 7
  grep -q "algorithm: ${spec##*:}" <<<"$out" || bad "$spec: preamble does not name the algorithm"
done

# Bad algorithms and flags: non-zero exit with a message.
expect_error() {  # expect_error PATTERN ARGS...
  local pattern=$1
  shift
  run 2 "$@"
  echo "== $*: exit $rc"
  [[ $rc -ne 0 ]] || bad "'$*' exited 0"
  grep -qE -- "$pattern" <<<"$out" || bad "'$*': no message matching /$pattern/"
}
expect_error 'all_reduce has no algorithm "nosuch" \(it has: ' --algo nosuch -b 8 -e 8
expect_error 'all_gather has no algorithm "tree"' --coll all_gather --algo tree -b 8 -e 8
expect_error 'send_recv is point-to-point' --coll send_recv --algo ring -b 8 -e 8
expect_error "unknown option '--bogus'" --bogus
expect_error "bad value '1X' for -b" -b 1X
expect_error "option -e/--maxbytes needs a value" -e
expect_error "bad value 'foo' for -d" -d foo
expect_error "bad value 'foo' for --coll" --coll foo
expect_error "-b \(64\) is larger than -e \(8\)" -b 64 -e 8
expect_error "root 5 is not a rank" --coll broadcast -r 5 -b 8 -e 8
run 2 -h
[[ $rc -eq 0 ]] && grep -q -- '--coll <name>' <<<"$out" || bad "-h: exit $rc or no usage"

# The checker can fail: one element spoiled on rank 1 fails every row and the run.
for coll in all_reduce all_gather; do
  run 2 --coll "$coll" -b 1K -e 4K -f 2 -n 1 -w 0 --debug-corrupt-rank 1
  echo "== $coll --debug-corrupt-rank 1: exit $rc"
  [[ $rc -ne 0 ]] || bad "$coll --debug-corrupt-rank 1 exited 0"
  [[ $(rows | awk '$9 > 0 && $13 > 0' | wc -l) -eq 3 ]] || bad "$coll corrupt: expected #wrong > 0 in all 3 rows"
  grep -qE '^# Out of bounds values : [1-9][0-9]* FAILED$' <<<"$out" || bad "$coll corrupt: footer does not say FAILED"
  grep -qE "^tutti_perf: rank 1: $coll float32 .* 1 of [0-9]+ elements wrong; first at index [0-9]+: got nan, expected" \
    <<<"$out" || bad "$coll corrupt: rank 1 does not say which element"
  grep -qE "^#   $coll float32 .*out-of-place: 1 wrong$" <<<"$out" || bad "$coll corrupt: no summary of failed rows"
done

[[ $fail -eq 0 ]] && echo "tutti_perf behaved"
exit $fail
