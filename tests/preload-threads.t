#!/bin/sh
# Every thread: its own event, its own name, its own functions, its full stack.
. "$(dirname "$0")/lib.sh"
plan 15

LD_PRELOAD=$LIB AUTOPROF_QUIET=1 "$B/progs/threads" 600 >out.txt 2>err.txt
is "$?" 0 "the threaded program exits 0"
is "$(cat out.txt)" "threads: done" "its output is unchanged"
perf report -i perf.data --stdio >/dev/null 2>rep.err
clean_stderr rep.err
ok $? "perf report reads the file without a warning" || diag_file rep.err
perf_script perf.data -F comm,tid,ip,sym >script.txt
clean_stderr perf.data.err
ok $? "perf script reads the file without a warning" || diag_file perf.data.err

# One paragraph per sample: "comm tid" then the chain, innermost first.
awk 'BEGIN { RS = "" } {
	split($0, line, "\n"); split(line[1], f, " "); comm = f[1]
	n[comm]++; total++
	if ($0 ~ ("burn_" want[comm])) own[comm]++
	if ($0 ~ /start_thread/) deep[comm]++
}
BEGIN { want["busy-0"] = "alpha"; want["busy-1"] = "beta"; want["busy-2"] = "gamma"; want["busy-3"] = "delta" }
END {
	for (c in want) printf "%s %d %d %d %d\n", c, n[c], own[c], deep[c], total
}' script.txt | sort >threads.txt
diag_file threads.txt
for i in 0 1 2 3; do
	set -- $(grep "^busy-$i " threads.txt)
	within "$(awk -v a="$2" -v t="$5" 'BEGIN { print t ? 100 * a / t : 0 }')" 20 30 \
		"thread busy-$i has a quarter of the samples"
done
bad=
for i in 0 1 2 3; do
	set -- $(grep "^busy-$i " threads.txt)
	[ "$2" -gt 0 ] && [ $((100 * $3)) -ge $((98 * $2)) ] || bad="$bad busy-$i"
done
is "$bad" "" "98% of each thread's samples are in its own function (named by pthread_setname_np or prctl)"
bad=
for i in 0 1 2 3; do
	set -- $(grep "^busy-$i " threads.txt)
	[ "$2" -gt 0 ] && [ $((100 * $4)) -ge $((99 * $2)) ] || bad="$bad busy-$i"
done
is "$bad" "" "99% of each thread's stacks reach start_thread"
n=$(perf report -i perf.data --stdio --sort comm 2>/dev/null | grep -c 'busy-[0-3]')
is "$n" 4 "perf report --sort comm shows the four named threads"
if [ -x "$PERFPARSER" ]; then
	"$PERFPARSER" --input perf.data --print-stats >parser.txt 2>&1
	got=$(awk '/^samples:/ { print $2 }' parser.txt)
	want=$(awk 'BEGIN { RS = "" } END { print NR }' script.txt)
	is "$got" "$want" "hotspot-perfparser reads every sample"
else
	skip "hotspot-perfparser not installed"
fi

# A thread another library started before our constructor ran is found in
# /proc/self/task and sampled too (LD_PRELOAD order makes libearly's run first).
steal_mark
AUTOPROF_QUIET=1 AUTOPROF_OUTPUT=early.data LD_PRELOAD="$LIB $B/progs/libearly.so" "$B/progs/split" 500 >/dev/null
n=$(perf report -i early.data --stdio --no-children --sort sym -n 2>/dev/null |
	awk '$NF == "early_thread_work" { print $2 }')
within "$n" 150 $((350 + $(stolen_ms))) "a thread started before the profiler is attached and sampled"

# 10 kHz on four threads: many samples land while libunwind holds its cache
# lock with every signal blocked; a nested handler there would deadlock.
timeout 120 env AUTOPROF_QUIET=1 AUTOPROF_FREQ=10000 AUTOPROF_OUTPUT=fast.data LD_PRELOAD="$LIB" \
	"$B/progs/threads" 500 >/dev/null 2>&1
is "$?" 0 "10 kHz on four busy threads: the program runs to its end (no deadlock)"
perf report -i fast.data --stdio >/dev/null 2>fast.err && clean_stderr fast.err
ok $? "and its file reads cleanly" || diag_file fast.err
done_testing
