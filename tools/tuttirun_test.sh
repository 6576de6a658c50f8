#!/bin/sh
# Runs the real tuttirun binary: output prefixing, environment, failures, signals.
# Usage: tuttirun_test.sh PATH_TO_TUTTIRUN
set -u

TUTTIRUN=${1:-$TEST_SRCDIR/tutti/tools/tuttirun}
TMP=${TEST_TMPDIR:-$(mktemp -d)}
OUT=$TMP/out
ERR=$TMP/err
unset TUTTI_SECRET MASTER_ADDR MASTER_PORT RANK WORLD_SIZE
failures=0

fail() {
  echo "FAIL: $*"
  echo "--- stdout:"; cat "$OUT"
  echo "--- stderr:"; cat "$ERR"
  failures=$((failures + 1))
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# run ARGS...: runs tuttirun, sets $rc and $took_ms.
run() {
  start=$(now_ms)
  timeout -s KILL 20 "$TUTTIRUN" "$@" >"$OUT" 2>"$ERR"  # a hang fails in 20 s, not 100
  rc=$?
  took_ms=$(($(now_ms) - start))
}

expect_rc() { [ "$rc" = "$1" ] || fail "$2: exit code $rc, want $1"; }
expect_out() { grep -qxF -- "$1" "$OUT" || fail "$2: no line '$1' on stdout"; }
expect_err() { grep -qF -- "$1" "$ERR" || fail "$2: '$1' not on stderr"; }
expect_fast() { [ "$took_ms" -lt "$1" ] || fail "$2: took $took_ms ms, want < $1"; }
# Succeeds while the process runs (a zombie waiting for its reaper counts as gone).
running() {
  state=$(ps -o stat= -p "$1" 2>/dev/null)
  case "$state" in "" | Z*) return 1 ;; *) return 0 ;; esac
}
expect_dead() { running "$1" && fail "$2: pid $1 still running"; }

# --- every rank runs, with its line prefix and its variables
run -n 4 sh -c 'echo hi $RANK $WORLD_SIZE $LOCAL_RANK; echo oops $LOCAL_WORLD_SIZE >&2'
expect_rc 0 "basic"
for r in 0 1 2 3; do
  expect_out "[rank $r] hi $r 4 $r" "basic"
  grep -qxF "[rank $r] oops 4" "$ERR" || fail "basic: no '[rank $r] oops 4' on stderr"
done
[ "$(wc -l <"$OUT")" = 4 ] || fail "basic: want 4 lines on stdout"
grep -q oops "$OUT" && fail "basic: stderr went to stdout"

# --- MASTER_ADDR, MASTER_PORT and TUTTI_SECRET are set, the same for every rank
run -n 2 sh -c 'echo "$MASTER_ADDR $MASTER_PORT $TUTTI_SECRET"'
expect_rc 0 "env"
[ "$(sed 's/^\[rank .\] //' "$OUT" | sort -u | wc -l)" = 1 ] || fail "env: ranks differ"
grep -qE '^\[rank 0\] 127\.0\.0\.1 [0-9]+ [0-9a-f]{32}$' "$OUT" || fail "env: bad values"
run -n 2 --nnodes=2 --node-rank 1 --master-addr head --master-port 1234 --secret s3 \
  sh -c 'echo $RANK $WORLD_SIZE $LOCAL_RANK $MASTER_ADDR $MASTER_PORT $TUTTI_SECRET'
expect_rc 0 "env options"
expect_out "[rank 2] 2 4 0 head 1234 s3" "env options"
expect_out "[rank 3] 3 4 1 head 1234 s3" "env options"
run --nnodes 2 true
expect_rc 2 "several nodes without a secret"
expect_err "TUTTI_SECRET" "several nodes without a secret"

# --- a partial last line is flushed; long output never mixes inside a line
run -n 2 sh -c 'printf "no newline $RANK"'
expect_out "[rank 1] no newline 1" "partial line"
run -n 3 sh -c 'i=0; while [ $i -lt 300 ]; do
  echo "$RANK:xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx:$RANK"
  i=$((i + 1)); done'
good=$(grep -cE '^\[rank ([0-2])\] \1:x{85}:\1$' "$OUT")
[ "$good" = 900 ] || fail "interleaving: $good of 900 lines intact"

# --- --no-prefix
run -n 2 --no-prefix sh -c 'echo plain'
expect_rc 0 "no prefix"
[ "$(grep -cxF plain "$OUT")" = 2 ] || fail "no prefix: want 2 plain lines"

# --- a failing rank stops the others (which would sleep 100 s)
run -n 4 sh -c 'if [ $RANK = 2 ]; then sleep 0.2; exit 3; fi; sleep 100'
expect_rc 3 "failing rank"
expect_err "tuttirun: rank 2 (pid " "failing rank"
expect_err "exited with code 3; stopping the other ranks" "failing rank"
expect_fast 3000 "failing rank"

# --- a rank killed by a signal; its background children die with it
run -n 2 sh -c 'sleep 100 & echo $! >"$0.$RANK"; if [ $RANK = 1 ]; then kill -9 $$; fi; wait' \
  "$TMP/bg"
expect_rc 137 "killed rank"
expect_err "rank 1 (pid " "killed rank"
expect_err "was killed by signal 9 (Killed)" "killed rank"
expect_fast 3000 "killed rank"
expect_dead "$(cat "$TMP/bg.0")" "sleep started by rank 0"
expect_dead "$(cat "$TMP/bg.1")" "sleep started by the killed rank 1"

# --- a program that does not exist
run -n 2 /no/such/program arg
expect_rc 127 "missing program"
expect_err "tuttirun: cannot run /no/such/program: No such file or directory" "missing program"
run -n 2 no-such-program-on-path
expect_rc 127 "missing program on PATH"
expect_err "cannot run no-such-program-on-path: No such file or directory" "missing on PATH"

# --- --timeout
run -n 2 --timeout 300ms sleep 100
expect_rc 124 "timeout"
expect_err "did not finish within 0.3 s" "timeout"
expect_fast 3000 "timeout"

# --- SIGTERM to tuttirun reaches every rank
rm -f "$TMP"/pid.*
start=$(now_ms)
"$TUTTIRUN" -n 2 sh -c 'echo $$ >"$0.$RANK.tmp"; mv "$0.$RANK.tmp" "$0.$RANK"; sleep 100' \
  "$TMP/pid" >"$OUT" 2>"$ERR" &
launcher=$!
i=0
while [ ! -f "$TMP/pid.0" ] || [ ! -f "$TMP/pid.1" ]; do
  i=$((i + 1))
  [ $i -lt 500 ] || break
  sleep 0.01
done
kill -TERM $launcher
i=0
while running $launcher && [ $i -lt 300 ]; do
  i=$((i + 1))
  sleep 0.01
done
running $launcher && kill -KILL $launcher
wait $launcher
rc=$?
took_ms=$(($(now_ms) - start))
expect_rc 143 "SIGTERM"
expect_err "got signal 15" "SIGTERM"
expect_fast 3000 "SIGTERM"
for r in 0 1; do
  if [ -f "$TMP/pid.$r" ]; then
    expect_dead "$(cat "$TMP/pid.$r")" "SIGTERM rank $r"
  else
    fail "SIGTERM: rank $r never started"
  fi
done

# --- usage
run --help
expect_rc 0 "help"
expect_out "usage: tuttirun [options] [--] PROG [ARGS...]" "help"
run --bogus prog
expect_rc 2 "bad option"
expect_err "unknown option --bogus" "bad option"

if [ $failures -ne 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all tuttirun checks passed"
