#!/bin/sh
# One count of samples everywhere, on aggregated files too (--aggregate: a
# record merges a thread's samples with one stack): the launcher's closing
# line, `autoprof ctl status` after a stop, and every view of autoprof-report
# (the header, the tables' Samples column, JSON, the flame graph, folded)
# count the samples, not the records; the header adds the records.
. "$(dirname "$0")/lib.sh"
needs "$B/progs/service" "$B/autoprof"
plan 12

A=$B/autoprof
SVC=$B/progs/service


# Two workers spin 1.5 s; stopped at 2 s (every buffer is in the file then), ends at 2.5 s.
"$A" --aggregate -o a.data -- "$SVC" 2 1.5 2.5 >a.out 2>a.err &
L=$!
until_ok "$A" ctl $L status
sleep 2
"$A" ctl $L stop >/dev/null 2>&1
"$A" ctl $L status >st.txt 2>&1
wait $L
n_ctl=$(sed -n 's/^samples: \([0-9]*\) .*/\1/p' st.txt)
n_line=$(sed -n 's/^autoprof: wrote a.data (\([0-9]*\) samples.*/\1/p' a.err)
within "$n_line" 100 100000 "the closing line counts the samples" || diag_file a.err
is "$n_ctl" "$n_line" "ctl status after the stop counts as many" || diag_file st.txt
recs=$(perf script -i a.data -F period 2>/dev/null | grep -c .)
"$REPORT" a.data >rep.txt 2>&1
grep -q "^Samples: *$n_line (in $recs merged records)" rep.txt
ok $? "the report's header: $n_line samples in $recs merged records" || diag_file rep.txt
col=$(awk '/^Top functions by self time/ { on = 1; next } on && /^$/ { exit }
	on && $1 ~ /%$/ { s += $2 } END { print s + 0 }' rep.txt)
is "$col" "$n_line" "the self table's Samples column adds up to the samples, not the records"
busy=$(awk '/^Top functions by self time/ { on = 1; next } on && $3 == "busy_loop" { print $2; exit }' rep.txt)
within "$busy" $((recs + 1)) "$n_line" "busy_loop's row counts samples ($busy), more than all records ($recs)"
"$REPORT" --json a.data >j.json 2>&1
got=$(python3 -c 'import json; d = json.load(open("j.json")); e = d["events"][0]
print(d["samples"], d["records"], e["samples"], sum(f["self_samples"] for f in e["functions"]))')
is "$got" "$n_line $recs $n_line $n_line" "JSON: samples (the file's, the event's, the functions'), records apart"
"$REPORT" --folded a.data >f.txt 2>&1
is "$(awk '{ s += $NF } END { print s + 0 }' f.txt)" "$n_line" "folded: the stacks add up to the samples"
"$REPORT" --flame f.svg a.data >/dev/null 2>&1
grep -q "cpu-clock, $n_line samples<" f.svg
ok $? "the flame graph's subtitle counts the samples"

# --focus on an aggregated file: what it keeps out is counted in samples too.
"$REPORT" --ignore . a.data >ign.txt 2>&1
grep -q "^Samples: *$n_line (in $recs merged records) ($n_line outside --focus" ign.txt
ok $? "--ignore . (every stack): the $n_line samples it keeps out, not their $recs records" || diag_file ign.txt

# Windows: the report over every window's file counts what the closing lines count.
"$A" --aggregate --window 1s -o w.data -- "$SVC" 2 1.5 2.5 >w.out 2>w.err
sum=$(sed -n 's/^autoprof: *w\.data\.[0-9T.]* *pid [0-9]* *\([0-9]*\) samples\{0,1\} .*/\1/p' w.err |
	awk '{ s += $1 } END { print s + 0 }')
files=$(ls w.data.2* | grep -v '\.stat$')
within "$(echo "$files" | grep -c .)" 2 10 "--window 1s: a file per window" || diag_file w.err
# shellcheck disable=SC2086
"$REPORT" $files >wrep.txt 2>&1
is "$(sed -n 's/^Samples: *\([0-9]*\).*/\1/p' wrep.txt)" "$sum" "the report over the windows counts the closing lines' $sum samples"
# shellcheck disable=SC2086
col=$(awk '/^Top functions by self time/ { on = 1; next } on && /^$/ { exit }
	on && $1 ~ /%$/ { s += $2 } END { print s + 0 }' wrep.txt)
is "$col" "$sum" "... and so does its table"
done_testing
