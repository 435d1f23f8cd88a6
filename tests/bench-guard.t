#!/bin/sh
# The benchmarks' guard against a busy machine (issue 26, scripts/bench/quiet.py):
# cost.py refuses to report (exit 3, one line) when the load average is above
# --max-load before the first round, or when other processes use more than
# --max-foreign CPUs during a round; with --busy-ok it reports, every figure
# marked. report_speed.py, service.py, memory.py and outside-cost.sh
# (bench-report, bench-service, bench-memory, bench-outside-cost) refuse the
# same way; service.py and memory.py mark every figure with --busy-ok. No
# timing is asserted: only what the guard decides and says.
. "$(dirname "$0")/lib.sh"
needs "$B/progs/costloop"
[ -e "$B/bench/libfloor.so" ] || make -C "$ROOT" -s "$B/bench/libfloor.so" >make.log 2>&1
needs "$B/bench/libfloor.so"
plan 23

COST="python3 $ROOT/scripts/bench/cost.py --build $B --only floor --programs shallow:1:1 --rates 1000 --rounds 1 --seconds 0.05 --no-phases --quiet-wait 0"

# A load average above the limit (no machine has one below -1): refused.
timeout -s KILL 60 $COST --max-load -1 --out refused.md >refused.out 2>refused.err
is "$?" 3 "a busy machine: exit status 3"
is "$(wc -l <refused.err)" 1 "... one line on stderr" || diag_file refused.err
grep -q '^cost: refusing to report: the machine is busy: load average .* above -1.00 before the first round' refused.err
ok $? "... saying why"
[ ! -e refused.md ] && [ ! -s refused.out ]
ok $? "... and no report"

# --busy-ok: the report, every figure marked.
timeout -s KILL 60 $COST --max-load -1 --busy-ok --out busy.md >busy.out 2>busy.err
is "$?" 0 "--busy-ok: reports" || diag_file busy.err
grep -q 'MADE ON A BUSY MACHINE' busy.md
ok $? "... saying it was made on a busy machine"
# Every cell of the ratio table that has a figure carries the mark.
awk -F'|' '/^\| shallow \| 1000 Hz/ && !seen++ { for (i = 4; i < NF; i++) if ($i ~ /[0-9]/ && $i !~ /\(busy\)/) bad++; n++ }
	END { exit !(n == 1 && !bad) }' busy.md
ok $? "... every figure marked (busy)" || diag_file busy.md

# Another process using a CPU during the round: refused, whatever the load average.
timeout -s KILL 20 sh -c 'while :; do :; done' &
burner=$!
timeout -s KILL 60 $COST --max-load 1000 --max-foreign 0.3 --seconds 0.5 --out foreign.md \
	>foreign.out 2>foreign.err
st=$?
kill "$burner" 2>/dev/null
wait "$burner" 2>/dev/null
is "$st" 3 "other processes' CPU during a round: exit status 3" || diag_file foreign.err
grep -Eq 'other processes used [0-9.]+ CPUs (before the first round|during round 1)' foreign.err
ok $? "... saying so" || diag_file foreign.err

# cost.py's real programs are sized with --seconds like costloop (sort's text
# and python3's loop; xz9's text): the report says how big.
timeout -s KILL 60 $COST --programs sort,python3,xz9 --max-load 1000 --max-foreign 1000 \
	--seconds 0.02 --out sized.md >sized.out 2>sized.err
grep -q '^Programs: sort = `sort .*SORTTEXT`; python3 = `python3 -c .*f(300000)'"'"'`.*TEXT = 0\.0 MB of generated words; SORTTEXT = 1\.0 MB of generated words\.$' sized.md
ok $? "cost.py sizes sort's text and python3's loop with --seconds" || diag_file sized.md

# The other guarded benchmarks refuse the same way, before anything is run.
for script in report_speed service memory; do
	timeout -s KILL 60 python3 "$ROOT/scripts/bench/$script.py" --build "$B" --max-load -1 \
		--quiet-wait 0 --out "$script.md" >"$script.out" 2>"$script.err"
	st=$?
	[ "$st" = 3 ] && [ "$(wc -l <"$script.err")" = 1 ] &&
		grep -q "^$script: refusing to report: the machine is busy: load average .* above -1.00 before the first round" "$script.err" &&
		[ ! -e "$script.md" ] && [ ! -s "$script.out" ]
	ok $? "$script.py on a busy machine: exit status 3, one line saying why, no report" ||
		{ diag "exit status $st"; diag_file "$script.err"; }
done

# A shell script's guard (quiet.py's command line, bench-outside-cost): the
# same refusal; and a round in which another process burns a CPU is refused
# at its end (or before the first round, if the machine was busy already).
Q="python3 $ROOT/scripts/bench/quiet.py"
timeout -s KILL 30 $Q start shell-bench refused.state --max-load -1 --quiet-wait 0 2>sh.err
st=$?
[ "$st" = 3 ] && [ "$(wc -l <sh.err)" = 1 ] &&
	grep -q '^shell-bench: refusing to report: the machine is busy: load average' sh.err
ok $? "quiet.py start on a busy machine: exit status 3, one line saying why" ||
	{ diag "exit status $st"; diag_file sh.err; }
timeout -s KILL 20 sh -c 'while :; do :; done' &
burner=$!
(timeout -s KILL 30 $Q start shell-bench g.state --max-load 1000 --max-foreign 0.3 --quiet-wait 0 &&
	times >t && $Q begin g.state t && sleep 1 && times >t &&
	timeout -s KILL 30 $Q end g.state "round 1" t) 2>sh2.err
st=$?
kill "$burner" 2>/dev/null
wait "$burner" 2>/dev/null
[ "$st" = 3 ] && grep -Eq '^shell-bench: refusing to report: the machine is busy: other processes used [0-9.]+ CPUs (before the first round|during round 1)' sh2.err
ok $? "quiet.py end: other processes' CPU during a shell round, exit status 3" ||
	{ diag "exit status $st"; diag_file sh2.err; }
if [ -x /usr/bin/time ] && command -v perf >/dev/null; then
	RUNS=1 OUT=oc.tsv timeout -s KILL 30 sh "$ROOT/scripts/bench/outside-cost.sh" --max-load -1 \
		--quiet-wait 0 >oc.out 2>oc.err
	st=$?
	[ "$st" = 3 ] && [ "$(wc -l <oc.err)" = 1 ] && [ ! -s oc.out ] &&
		grep -q '^outside-cost: refusing to report: the machine is busy' oc.err
	ok $? "outside-cost.sh on a busy machine: exit status 3, one line, no table" ||
		{ diag "exit status $st"; diag_file oc.err; }
else
	skip "outside-cost.sh: needs /usr/bin/time and perf (sh scripts/install-deps.sh bench)"
fi

# bench-service with --busy-ok: every figure marked (a 1-second service).
timeout -s KILL 90 python3 "$ROOT/scripts/bench/service.py" --build "$B" --minutes 0.02 \
	--requests 1 --max-load -1 --busy-ok --quiet-wait 0 --out svc.md >svc.out 2>svc.err
is "$?" 0 "service.py --busy-ok: reports" || diag_file svc.err
grep -q 'MADE ON A BUSY MACHINE' svc.md
ok $? "... saying it was made on a busy machine"
# every cell with a digit in the two tables' value columns carries the mark
awk -F'|' '/^\| (start|stop|dump|status) \|/ { for (i = 3; i <= 6; i++) { n++; if ($i !~ /\(busy\)/) bad++ } }
	/^\| (bytes per sample|disk, |peak RSS|extra RSS)/ { n++; if ($3 !~ /\(busy\)/) bad++ }
	END { exit !(n == 23 && !bad) }' svc.md
ok $? "... every figure marked (busy)" || diag_file svc.md

# bench-memory with --busy-ok (its smoke size): every figure marked, the
# targets judged MET or MISSED, the launcher's own process stated apart.
if [ -x /usr/bin/time ] && command -v g++ >/dev/null; then
	timeout -s KILL 100 python3 "$ROOT/scripts/bench/memory.py" --build "$B" --quick --runs 1 \
		--programs map --gperftools none --max-load -1 --busy-ok --quiet-wait 0 \
		--out mem.md >mem.out 2>mem.err
	is "$?" 0 "memory.py --busy-ok: reports" || diag_file mem.err
	awk -F'|' '/^\| map \| (autoprof|`--memory`|`--memory-interval 1`) \|/ && !/peak RSS/ {
			for (i = 4; i < NF; i++) if ($i ~ /[0-9]/ && $i !~ /^ 1 $/) { n++; if ($i !~ /\(busy\)/) bad++ } }
		END { exit !(n >= 20 && !bad) }' mem.md
	ok $? "... every figure marked (busy)" || diag_file mem.md
	grep -Eq '^\| map \| `--memory` <= 1\.05x plain \| (MET|\*\*MISSED\*\*)[^|]*\(busy\) \|$' mem.md &&
		grep -Eq '^\| map \| `--memory` <= 1\.05x autoprof \| (MET|\*\*MISSED\*\*)' mem.md
	ok $? "... the targets judged MET or MISSED" || diag_file mem.md
	grep -Eq '^\| map \| `--memory` \| [0-9.]+ \(busy\) \| \+[0-9.]+ \(busy\) \| autoprof [0-9.]+ \(busy\)' mem.md
	ok $? "... the program's peak RSS and the launcher's apart" || diag_file mem.md
else
	skip "memory.py: needs /usr/bin/time and g++ (sh scripts/install-deps.sh bench)"
	skip "memory.py"
	skip "memory.py"
	skip "memory.py"
fi
done_testing
