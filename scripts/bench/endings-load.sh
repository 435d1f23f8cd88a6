#!/bin/sh
# endings-load.sh [RUNS] - every ending, RUNS times (default 20), under two
# CPU hogs: tests/endings-load.t with ENDINGS_RUNS=RUNS (SIGTERM, SIGINT,
# SIGHUP at their default action, exit, _exit, abort, exec, exit_group,
# SIGKILL), then real programs: `openssl dgst -sha256 /dev/zero` sent SIGTERM
# and a Python busy loop sent SIGINT after 2 s, under LD_PRELOAD and under
# the launcher. A run fails when the status differs from a plain run's, when
# the program is alive 10 s after the signal (a hang), or when the file is
# missing, has no sample, or perf report prints anything on stderr.
# Prints one line per failure and a count per case; exits 1 on any failure.
# Run it on a quiet machine (it makes its own load); from the repository root
# after `make all`. SKIP_T=1 leaves out the test file (the real programs only).
RUNS=${1:-20}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
LIB=$ROOT/build/libautoprof.so
AP=$ROOT/build/autoprof
W=$(mktemp -d /tmp/endings-load.XXXXXX)
fail=0

[ -n "$SKIP_T" ] || ENDINGS_RUNS=$RUNS timeout -s KILL $((RUNS * 40 + 60)) prove "$ROOT/tests/endings-load.t" || fail=1

cd "$W" || exit 1
timeout -s KILL $((RUNS * 60 + 60)) sh -c 'while :; do :; done' >/dev/null 2>&1 &
hog1=$!
timeout -s KILL $((RUNS * 60 + 60)) sh -c 'while :; do :; done' >/dev/null 2>&1 &
hog2=$!
trap 'kill -TERM $hog1 $hog2 2>/dev/null; wait $hog1 $hog2 2>/dev/null; rm -rf "$W"' EXIT  # TERM: timeout passes it on

# one NAME HOW SIG WANT CMD...: run CMD (HOW: preload or launcher), send SIG
# to the program after 2 s; 0 when it ended as WANT with a good file.
one() {
	name=$1 how=$2 sig=$3 want=$4
	shift 4
	rm -f o.data*
	if [ "$how" = preload ]; then
		timeout -s KILL 60 env --default-signal=INT AUTOPROF_QUIET=1 \
			AUTOPROF_OUTPUT="$W/o.data" LD_PRELOAD="$LIB" "$@" >/dev/null 2>err &
	else
		timeout -s KILL 60 env --default-signal=INT "$AP" -q -o "$W/o.data" -- "$@" \
			>/dev/null 2>err &
	fi
	pid=$!
	sleep 2
	prog=$(pgrep -n -f "^$1 " | head -1)
	[ -n "$prog" ] && kill -"$sig" "$prog"
	i=0
	while kill -0 "$prog" 2>/dev/null && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	if kill -0 "$prog" 2>/dev/null; then
		kill -KILL "$pid" "$prog" 2>/dev/null
		wait "$pid"
		echo "FAIL $name $how: still running 10 s after SIG$sig"
		return 1
	fi
	wait "$pid"
	rc=$?
	[ "$rc" = "$want" ] || { echo "FAIL $name $how: status $rc, want $want"; return 1; }
	[ -f o.data ] || { echo "FAIL $name $how: no file"; return 1; }
	n=$(perf report -i o.data --stdio --sort comm 2>rep.err | grep -c '%')
	[ -s rep.err ] && { echo "FAIL $name $how: perf report: $(head -1 rep.err)"; return 1; }
	[ "$n" -gt 0 ] || { echo "FAIL $name $how: no sample in the file"; return 1; }
	return 0
}

PY=$(ls /usr/bin/python3 2>/dev/null || command -v python3) # not a pyenv shim: its pid is a shell first
for how in preload launcher; do
	for c in openssl python; do
		bad=0
		for r in $(seq "$RUNS"); do
			if [ $c = openssl ]; then
				one openssl $how TERM 143 openssl dgst -sha256 /dev/zero || bad=$((bad + 1))
			else
				one "$PY" $how INT 130 "$PY" -c 'while True: pass' || bad=$((bad + 1))
			fi
		done
		echo "$c ($how): $bad of $RUNS runs failed"
		[ $bad = 0 ] || fail=1
	done
done
exit $fail
