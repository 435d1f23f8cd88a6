#!/bin/bash
# signals-stress.sh [RUNS] - issue 21's signal cases, RUNS times each (20 by
# default), beside two CPU hogs this script starts and kills: the programs
# that own their signals (tests/hostile/sigown.c, every mode), a full
# real-time signal queue (RLIMIT_SIGPENDING 1, default and real-time
# sampling signal), gdb --batch, lldb --batch, strace -f, valgrind --tool=none, and the
# highest rate the kernel takes (-F kernel.perf_event_max_sample_rate). Each
# run is compared with a plain run of the same program (stdout and exit
# status); a run that hangs is killed after 60 s and counted as a failure.
# Prints one line per case (runs, failures) and exits 1 when any failed.
# Run it on a quiet machine, from the repository root, after `make all`.
set -u
RUNS=${1:-20}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=$ROOT/build
LIB=$B/libautoprof.so
make -C "$ROOT" -s "$B/hostile/sigown" "$B/progs/mtwork" || exit 1
T=$(mktemp -d /tmp/autoprof-sigstress.XXXXXX)
hog() { while :; do :; done; }
hog &
H1=$!
hog &
H2=$!
trap 'kill $H1 $H2 2>/dev/null; wait $H1 $H2 2>/dev/null; rm -rf "$T"' EXIT
cd "$T" || exit 1
TO="timeout -s KILL 60"
MAX=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
failed=0

# case NAME ENV... -- CMD...: RUNS profiled runs of CMD against one plain run.
case_() {
	local name=$1 env="" bad=0 i
	shift
	while [ "$1" != -- ]; do
		env="$env $1"
		shift
	done
	shift
	$TO "$@" >plain 2>/dev/null
	echo "exit $?" >>plain
	for i in $(seq "$RUNS"); do
		# shellcheck disable=SC2086
		(ulimit -t 50; $TO env $env LD_PRELOAD="$LIB" AUTOPROF_OUTPUT="$T/p.data" "$@" \
			>prof 2>err; echo "exit $?" >>prof)
		if ! cmp -s plain prof; then
			bad=$((bad + 1))
			cp prof "$name.fail$i"
			cp err "$name.err$i"
		fi
	done
	printf '%-22s %3d runs %3d failed\n' "$name" "$RUNS" "$bad"
	[ "$bad" = 0 ] || failed=1
}

for m in signalfd sigwaitinfo sigtimedwait threads handlers; do
	case_ "own-$m" -- "$B/hostile/sigown" "$m" 4
done
case_ sigpending -- bash -c 'ulimit -i 1 && exec "$@"' bash "$B/progs/mtwork" 0.2 2
case_ sigpending-rt AUTOPROF_SIGNAL=RTMIN+5 -- bash -c 'ulimit -i 1 && exec "$@"' bash \
	"$B/progs/mtwork" 0.2 2
case_ strace -- strace -f -o /dev/null "$B/progs/mtwork" 0.2 2
case_ valgrind -- valgrind -q --tool=none "$B/progs/mtwork" 0.05 2
case_ max-rate AUTOPROF_FREQ="$MAX" -- "$B/progs/mtwork" 0.3 2
case_ max-rate-xz AUTOPROF_FREQ="$MAX" -- sh -c \
	'head -c 2000000 /usr/bin/perl | xz -9 -c | xz -d | cksum'

# debugger NAME DONE STOPPED CMD...: RUNS runs of CMD (a debugger running
# mtwork); a run fails unless its output matches DONE (the program ran to its
# end) and never STOPPED (a signal stopped it).
debugger() {
	local name=$1 done=$2 stopped=$3 bad=0 i
	shift 3
	for i in $(seq "$RUNS"); do
		$TO "$@" >"$name.out" 2>&1
		if ! grep -q "$done" "$name.out" || grep -q "$stopped" "$name.out"; then
			bad=$((bad + 1))
			cp "$name.out" "$name.fail$i"
		fi
	done
	printf '%-22s %3d runs %3d failed\n' "$name" "$RUNS" "$bad"
	[ "$bad" = 0 ] || failed=1
}
debugger gdb 'exited normally' 'received signal' gdb --batch -ex run --args \
	env LD_PRELOAD="$LIB" AUTOPROF_OUTPUT="$T/g.data" "$B/progs/mtwork" 0.2 2
# lldb's default passes SIGPROF, SIGVTALRM and the real-time signals.
command -v lldb >/dev/null &&
	debugger lldb 'exited with status = 0 ' 'stop reason = signal' lldb --batch \
		-o "settings set target.env-vars LD_PRELOAD=$LIB AUTOPROF_OUTPUT=$T/l.data" \
		-o run -- "$B/progs/mtwork" 0.2 2
[ "$failed" = 0 ] || { echo "failures kept in $T (not removed)"; trap - EXIT; kill $H1 $H2; }
exit $failed
