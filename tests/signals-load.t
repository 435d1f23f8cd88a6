#!/bin/bash
# signals-load.t - our notifications never harm the program (issue 21), on a
# machine loaded by two CPU hogs this test starts and kills: programs that
# own their signals (all blocked and read by signalfd/sigwaitinfo/
# sigtimedwait, handlers on every signal) see exactly their own signals; a
# full real-time signal queue (RLIMIT_SIGPENDING 1) brings no SIGIO; gdb,
# strace -f and valgrind run the program to its end; the highest -F the
# kernel takes keeps the program alive and the closing line states the rate
# delivered. A hang is caught by a timeout and counted as a failure.
# scripts/bench/signals-stress.sh repeats these 20 times each.
. "$(dirname "$0")/lib.sh"

if ! make -C "$ROOT" -s "$B/hostile/sigown" "$B/progs/mtwork" >make.log 2>&1; then
	echo "Bail out! building sigown and mtwork failed"
	diag_file make.log
	exit 1
fi
OWN=$B/hostile/sigown
WORK=$B/progs/mtwork
TO="timeout -s KILL 60"

plan 19

# Two CPU hogs, killed at the end whatever happens.
hog() { while :; do :; done; }
hog &
H1=$!
hog &
H2=$!
trap 'kill $H1 $H2 2>/dev/null; wait $H1 $H2 2>/dev/null; rm -rf "$T"' EXIT

# same NAME ENV... -- CMD...: stdout and exit status of CMD plain and with
# the library preloaded (ENV added) are equal; the profile is NAME.data.
same() {
	_name=$1
	shift
	_env=
	while [ "$1" != -- ]; do
		_env="$_env $1"
		shift
	done
	shift
	$TO "$@" >"$_name.plain" 2>/dev/null
	echo "exit $?" >>"$_name.plain"
	# shellcheck disable=SC2086
	$TO env $_env LD_PRELOAD="$LIB" AUTOPROF_OUTPUT="$T/$_name.data" "$@" >"$_name.prof" \
		2>"$_name.err"
	echo "exit $?" >>"$_name.prof"
	if cmp -s "$_name.plain" "$_name.prof" && grep -q '^exit 0$' "$_name.plain"; then
		ok 0 "$_name: the same output and exit status plain and profiled"
	else
		ok 1 "$_name: the same output and exit status plain and profiled"
		diff "$_name.plain" "$_name.prof" | head -10 | sed 's/^/#   /' >&2
		diag_file "$_name.err"
	fi
}

# 1-5: programs that own their signals; they queue SIGRTMIN+0..8 and raise
# SIGPROF, SIGUSR1, SIGVTALRM, SIGIO to themselves, every round.
for m in signalfd sigwaitinfo sigtimedwait threads handlers; do
	same "own-$m" -- "$OWN" "$m" 4
done

# 6: the threads that do not read signals keep their samples.
n=$(perf report -i own-threads.data --stdio 2>/dev/null | sed -n 's/^# Samples: \([0-9]*\).*/\1/p' | head -1)
within "${n:-0}" 1 1000000 "own-threads: the computing threads' samples are in the profile"

# 7: one line says why a thread stopped being sampled.
grep -q "reads signal 27 itself on" own-signalfd.err
ok $? "own-signalfd: one line says the reading thread stopped being sampled" ||
	diag_file own-signalfd.err

# 8-9: a full real-time queue (RLIMIT_SIGPENDING 1): the kernel would turn a
# queued notification into a SIGIO that kills; default signal, and a
# real-time one asked for (its SIGIOs are dropped).
same sigpending -- bash -c 'ulimit -i 1 && exec "$@"' bash "$WORK" 0.2 2
same sigpending-rt AUTOPROF_SIGNAL=RTMIN+5 -- bash -c 'ulimit -i 1 && exec "$@"' bash "$WORK" 0.2 2

# 10-11: gdb runs the program to its end, never stopping on our signal.
if command -v gdb >/dev/null; then
	$TO gdb --batch -ex run --args env LD_PRELOAD="$LIB" AUTOPROF_OUTPUT="$T/gdb.data" \
		"$WORK" 0.2 2 >gdb.out 2>&1
	grep -q 'exited normally' gdb.out
	ok $? "gdb --batch -ex run: the program exits normally" || diag_file gdb.out
	! grep -q 'received signal' gdb.out
	ok $? "gdb: no signal stops the program" || grep 'received signal' gdb.out | head -3
else
	skip "no gdb"
	skip "no gdb"
fi

# 12-13: lldb (its default: SIGPROF, SIGVTALRM and the real-time signals
# pass without a stop) runs the program to its end and the profile has samples.
if command -v lldb >/dev/null; then
	$TO lldb --batch -o "settings set target.env-vars LD_PRELOAD=$LIB AUTOPROF_OUTPUT=$T/lldb.data" \
		-o run -- "$WORK" 0.2 2 >lldb.out 2>&1
	grep -q 'exited with status = 0 ' lldb.out && ! grep -q 'stop reason = signal' lldb.out
	ok $? "lldb --batch -o run: the program exits 0, never stopped by a signal" || diag_file lldb.out
	n=$(perf report -i "$T/lldb.data" --stdio 2>/dev/null | awk '/^# Samples:/ { print $3; exit }')
	[ "${n:-0}" -gt 0 ]
	ok $? "lldb: the profile has samples ($n)"
else
	skip "no lldb"
	skip "no lldb"
fi

# 14: rr records with the hardware counters it needs; it cannot run where there
# are none (this VM, most clouds), so it is tried only where "rr record true" works.
if command -v rr >/dev/null && timeout -s KILL 30 rr record -o "$T/rr-probe" true >/dev/null 2>&1; then
	$TO rr record -o "$T/rr-trace" env LD_PRELOAD="$LIB" AUTOPROF_OUTPUT="$T/rr.data" \
		"$WORK" 0.2 2 >rr.out 2>&1
	ok $? "rr record: the program exits 0" || diag_file rr.out
else
	skip "rr cannot record here (no hardware performance counters, or rr missing)"
fi

# 15: strace -f.
if command -v strace >/dev/null; then
	same strace -- strace -f -o /dev/null "$WORK" 0.2 2
else
	skip "no strace"
fi

# 16: valgrind's scheduler holds signals while a thread runs.
if command -v valgrind >/dev/null; then
	same valgrind -- valgrind -q --tool=none "$WORK" 0.05 2
else
	skip "no valgrind"
fi

# 17-19: the highest rate the kernel takes: the program lives, the rate is
# clamped with one line, and the closing line states the rate delivered.
max=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
(
	ulimit -t 50
	$TO "$B/autoprof" -F "$max" -o "$T/max.data" -- "$WORK" 0.3 2 >max.out 2>max.err
	echo "exit $?" >>max.out
)
$TO "$WORK" 0.3 2 >max.plain 2>/dev/null
echo "exit $?" >>max.plain
cmp -s max.plain max.out
ok $? "-F $max: the same output and exit status" || diag_file max.err
rate=$(sed -n 's/^autoprof: wrote .* samples at \([0-9]*\) Hz, .*/\1/p' max.err)
within "${rate:-0}" 100 "$max" "-F $max: the closing line states the rate delivered" ||
	diag_file max.err
perf report -i max.data --stdio >max.rep 2>max.rerr && grep -q '^# Samples: [1-9]' max.rep
ok $? "-F $max: perf report reads the profile" || diag_file max.rerr

done_testing
