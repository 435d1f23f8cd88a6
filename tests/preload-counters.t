#!/bin/sh
# Inherited counters: exact totals for the process, its threads and its
# children, in FILE.stat beside the profile (a perf stat record file) and
# perf-stat style on stderr.
. "$(dirname "$0")/lib.sh"
plan 15

# taskclock FILE: the task-clock msec from a perf-stat style text.
taskclock() { awk '$3 == "task-clock" { gsub(",", "", $1); print $1; exit }' "$1"; }
# ratio A B: A/B as a percentage difference
pctdiff() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print 999; else { d = 100 * (a - b) / b; print d < 0 ? -d : d } }'; }
# excess TC OWN STOLEN: how far task-clock TC is off the program's own CPU
# time OWN, in percent of OWN, once the time stolen from the VM (which
# task-clock counts and CPU-time clocks do not) is allowed for: 0 when TC is
# in [OWN, OWN + STOLEN], else the distance to that range.
excess() {
	awk -v t="$1" -v o="$2" -v s="$3" 'BEGIN {
		if (t == "" || o == "" || o == 0) { print 999; exit }
		d = t < o ? o - t : (t > o + s ? t - o - s : 0); print 100 * d / o }'
}

steal_mark
AUTOPROF_STAT=1 LD_PRELOAD=$LIB "$B/progs/cputime" 200 >out.txt 2>err.txt
is "$?" 0 "the forking, threaded program exits 0"
st=$(stolen_ms)
own=$(sed -n 's/^cpu_ms=//p' out.txt)
tc=$(taskclock err.txt)
within "$(excess "$tc" "$own" "$st")" 0 5 \
	"task-clock ($tc ms) matches the program's own CPU time of threads and child ($own ms, $st ms stolen)" ||
	diag_file err.txt

steal_mark
"$B/autoprof" --stat -o launched.data -- "$B/progs/cputime" 200 >out2.txt 2>err2.txt
st2=$(stolen_ms)
own2=$(sed -n 's/^cpu_ms=//p' out2.txt)
tc2=$(taskclock err2.txt)
within "$(excess "$tc2" "$own2" "$st2")" 0 5 \
	"with the launcher (enable_on_exec) too: $tc2 ms against $own2 ms ($st2 ms stolen)" || diag_file err2.txt
el=$(awk '/seconds time elapsed/ { e = $1; n++ } END { print n == 1 ? e : "tables:" n }' err2.txt)
within "$el" 0.25 3 "one table, for the whole tree; elapsed time runs from the exec, not summed over tasks"

perf stat report -i perf.data.stat >psr.txt 2>&1
within "$(pctdiff "$(taskclock psr.txt)" "$tc")" 0 0.1 "perf stat report -i perf.data.stat prints the same task-clock" ||
	diag_file psr.txt
perf report -i perf.data --stdio >/dev/null 2>rep.err
clean_stderr rep.err
ok $? "perf report reads a file with counters without a warning" || diag_file rep.err
perf script -i perf.data >/dev/null 2>scr.err
clean_stderr scr.err
ok $? "perf script reads it without a warning" || diag_file scr.err

perf script -i perf.data 2>/dev/null | grep -c '^CPU  *THREAD' >scr.txt
is "$(cat scr.txt)" 0 "perf script shows no table of stat data: the totals are in perf.data.stat"
for ev in context-switches page-faults; do
	grep -q " $ev " err.txt
	ok $? "$ev is counted"
done

# The plain names are read from getrusage (no perf event, whose static key
# the kernel would patch in and out for every profiled process); with a
# modifier they are perf events: both count the same faults and switches.
"$B/autoprof" -q --stat --counters 'context-switches,page-faults,context-switches:uk,page-faults:uk' \
	-o both.data -- "$B/progs/cputime" 100 >/dev/null 2>both.txt
count() { awk -v n="$1" '$2 == n { gsub(",", "", $1); print $1; exit }' both.txt; }
pf=$(count page-faults) pfk=$(count page-faults:uk) cs=$(count context-switches) csk=$(count context-switches:uk)
awk -v a="$pf" -v b="$pfk" -v c="$cs" -v d="$csk" 'function off(x, y) { return x - y > 0 ? x - y : y - x }
	BEGIN { exit !(a > 0 && b > 0 && off(a, b) <= 40 + b / 10 && off(c, d) <= 20 + d / 10) }'
ok $? "getrusage counts match the perf events': page faults $pf vs $pfk, switches $cs vs $csk" ||
	diag_file both.txt
strace -f -e trace=perf_event_open -o pe.txt env LD_PRELOAD=$LIB AUTOPROF_OUTPUT=pe.data /bin/true 2>/dev/null
grep -Eq 'PERF_COUNT_SW_(CONTEXT_SWITCHES|PAGE_FAULTS|CPU_MIGRATIONS)' pe.txt
isnt_ok=$?
is "$isnt_ok" 1 "the default counters open no software event that flips a kernel static key" ||
	diag_file pe.txt

if perf stat -e cycles -x, true 2>&1 | grep -q 'not supported'; then
	grep -q 'no hardware PMU here.*not counting cycles, instructions' err.txt
	ok $? "no PMU here: one line says which counters are missing" || diag_file err.txt
else
	awk '$2 == "cycles" { gsub(",", "", $1); exit !($1 > 0) }' err.txt
	ok $? "cycles are counted where the PMU has them"
fi

AUTOPROF_COUNTERS=task-clock,bogus LD_PRELOAD=$LIB /bin/true 2>err3.txt
grep -q "AUTOPROF_COUNTERS: 'bogus': not an event" err3.txt
ok $? "an unknown counter is refused by name" || diag_file err3.txt

AUTOPROF_QUIET=1 AUTOPROF_COUNTERS=none AUTOPROF_OUTPUT=none.data LD_PRELOAD=$LIB "$B/progs/split" 50 >/dev/null
is "$(perf report -i none.data --header-only 2>/dev/null | grep -c '^# event : name')" 1 \
	"AUTOPROF_COUNTERS=none leaves only the sampling event in the file"
done_testing
