#!/bin/sh
# The benchmarks' guard against a busy machine (issue 26, scripts/bench/quiet.py):
# cost.py refuses to report (exit 3, one line) when the load average is above
# --max-load before the first round, or when other processes use more than
# --max-foreign CPUs during a round; with --busy-ok it reports, every figure
# marked. No timing is asserted: only what the guard decides and says.
. "$(dirname "$0")/lib.sh"
needs "$B/progs/costloop"
[ -e "$B/bench/libfloor.so" ] || make -C "$ROOT" -s "$B/bench/libfloor.so" >make.log 2>&1
needs "$B/bench/libfloor.so"
plan 9

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
done_testing
