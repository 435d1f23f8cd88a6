#!/bin/sh
# Event names as perf and the PMU spell them (common/events.c, pmu_names.c):
# the launcher refuses a bad one before running anything; cache events and
# PMU names through libpfm4; counter groups {a,b}. Hardware counters need a
# PMU: on a machine without one those checks SKIP and say so (the encoding
# itself is checked against libpfm4's forced PMU models in
# tests/unit/test-preload-events.c).
. "$(dirname "$0")/lib.sh"
needs "$B/autoprof" "$B/progs/split"
plan 14

# One line naming the flag, exit 2, the command not run.
for spec in "-e INST_RETIRED.NO_SUCH_UMASK" "-e cycles:x" "--counters {cycles,instructions" \
	"--counters task-clock,bogus"; do
	# shellcheck disable=SC2086
	"$B/autoprof" $spec -- touch ran.txt >out.txt 2>err.txt
	st=$?
	[ "$st" -eq 2 ] && [ ! -e ran.txt ] && [ "$(wc -l <err.txt)" -eq 1 ] &&
		grep -q -- "${spec%% *}" err.txt
	ok $? "autoprof $spec: one line naming the flag, exit 2, nothing run" || diag_file err.txt
	rm -f ran.txt
done

# A group of software counters counts like the counters alone.
"$B/autoprof" -q --stat -o grp.data --counters '{task-clock,page-faults},context-switches' \
	-- "$B/progs/split" 300 >/dev/null 2>stat.txt
is "$?" 0 "a software counter group: the command runs"
grep -q 'msec task-clock' stat.txt && grep -Eq '[0-9] +page-faults' stat.txt &&
	grep -Eq '[0-9] +context-switches' stat.txt && ! grep -q '<not' stat.txt
ok $? "every counter of the group is counted" || diag_file stat.txt

# Cache events and PMU names: accepted everywhere perf accepts them.
if perf stat -e L1-dcache-load-misses:u -x, true 2>&1 | grep -q 'not supported'; then
	"$B/autoprof" -q --stat -o c.data --counters task-clock,L1-dcache-load-misses:u \
		-- "$B/progs/split" 100 >/dev/null 2>stat.txt
	grep -q '<not supported> *L1-dcache-load-misses:u' stat.txt
	ok $? "a cache event the machine lacks is <not supported>, and the run goes on" ||
		diag_file stat.txt
	skip "no hardware PMU here (perf stat -e L1-dcache-load-misses: not supported): cache events are not counted"
	skip "no hardware PMU here: PMU event names cannot be opened"
	skip "no hardware PMU here: sampling on a cache event"
else
	"$B/autoprof" -q --stat -o c.data --counters task-clock,instructions:u \
		-- "$B/progs/split" 100 >/dev/null 2>stat.txt
	ours=$(awk '$2 == "instructions:u" { gsub(/,/, "", $1); print $1 }' stat.txt)
	theirs=$(perf stat -x, -e instructions:u "$B/progs/split" 100 2>&1 >/dev/null |
		awk -F, '$3 ~ /instructions/ { print $1 }')
	awk -v a="$ours" -v b="$theirs" 'BEGIN { exit !(a > 0 && b > 0 && a / b > 0.98 && a / b < 1.02) }'
	ok $? "instructions:u within 2% of perf stat's ($ours vs $theirs)"
	"$B/autoprof" -q --stat -o c.data --counters '{L1-dcache-loads,L1-dcache-load-misses}' \
		-- "$B/progs/split" 100 >/dev/null 2>stat.txt
	grep -Eq '[0-9] +L1-dcache-load-misses' stat.txt
	ok $? "a group of cache events is counted" || diag_file stat.txt
	pmu=$(perf list --raw-dump pmu 2>/dev/null | tr ' ' '\n' | grep -m1 -E '^[A-Z_]+\.[A-Z_0-9]+$')
	if [ -n "$pmu" ]; then
		"$B/autoprof" -q --stat -o c.data --counters "task-clock,$pmu" \
			-- "$B/progs/split" 100 >/dev/null 2>stat.txt
		grep -q " $pmu" stat.txt && ! grep -q "AUTOPROF_COUNTERS" stat.txt
		ok $? "the PMU's own name $pmu is counted" || diag_file stat.txt
	else
		skip "perf list names no PMU events here"
	fi
	"$B/autoprof" -q -o s.data -e L1-dcache-load-misses -- "$B/progs/split" 200 >/dev/null 2>&1
	[ "$(nsamples s.data)" -gt 0 ]
	ok $? "sampling on a cache event writes samples"
fi

# Refused where perf refuses too: a PMU name of another CPU model.
LIBPFM_FORCE_PMU=skl "$B/autoprof" -q -o f.data -e MEM_LOAD_RETIRED.L3_MISS -- true 2>err.txt
is "$?" 0 "a PMU name libpfm4 encodes runs the command (unprofiled if the PMU lacks it)"
"$B/autoprof" -e NO_SUCH_EVENT.AT_ALL -- true 2>err.txt
grep -q "libpfm4" err.txt
ok $? "an unknown name says which PMU tables were searched" || diag_file err.txt

# autoprof list: every name it shows is one -e takes.
"$B/autoprof" list >list.txt 2>err.txt
ok $? "autoprof list exits 0" || diag_file err.txt
bad=$(awk '/^  / && $NF ~ /\]$/ { print $1 } /^PMU events/ { p = 1; next } p && /^  / { print $1 }' list.txt |
	grep -v rNNNN | while read -r e; do
		"$B/autoprof" -q -o l.data -e "$e" -- true 2>/dev/null || printf '%s ' "$e"
	done)
is "$bad" "" "every event autoprof list shows is accepted by -e ($(grep -c '^  ' list.txt) names)"

done_testing
