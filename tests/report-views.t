#!/bin/sh
# report-views.t - every view and export of autoprof-report on files written by
# the preload, checked against perf report / perf script / perf stat report on
# the same files: self shares (top 10 within 0.5 points), per-thread shares,
# folded totals, CSV record counts, JSON, flame graph XML, filters, diff, tree,
# counters, source lines, kernel symbols, merging and exit statuses.
. "$(dirname "$0")/lib.sh"

needs "$REPORT" "$LIB" "$B/progs/threads" "$B/progs/split" "$B/progs/syscalls"
plan 37

LD_PRELOAD=$LIB AUTOPROF_QUIET=1 AUTOPROF_OUTPUT=t.data "$B/progs/threads" 400 >/dev/null
LD_PRELOAD=$LIB AUTOPROF_QUIET=1 AUTOPROF_OUTPUT=s.data "$B/progs/split" 500 >/dev/null
[ -s t.data ] && [ -s s.data ]
ok $? "the preload wrote two profiles"

# ---- default view vs perf report --no-children (top 10 self shares) ----
# cmp_top FILE: "name ours perf" for our top 10 functions that perf also names
# (--no-inline: perf names the symbol's function; split.c inlines spin()).
cmp_top() {
	perf report -i "$1" --stdio --no-children --sort sym 2>/dev/null |
		awk '$1 ~ /%$/ && $2 ~ /^\[/ { sub(/%/, "", $1); $2 = ""; n = $0; sub(/^[^ ]+  */, "", n); print n "\t" $1 }' >perf.tsv
	"$REPORT" --no-inline --no-children --top 10 "$1" 2>/dev/null |
		awk '/by self time/ { t = 1; next } t && $1 ~ /%$/ { sub(/%/, "", $1); print $3 "\t" $1 }' >ours.tsv
	awk -F '\t' 'NR == FNR { p[$1] = $2; next } ($1 in p) { print $1, $2, p[$1] }' perf.tsv ours.tsv
}
for f in s.data t.data; do
	cmp_top $f >cmp.txt
	n=$(wc -l <cmp.txt)
	bad=$(awk '{ d = $2 - $3; if (d > 0.5 || d < -0.5) print $1 }' cmp.txt)
	[ "$n" -ge 2 ] && [ -z "$bad" ]
	ok $? "$f: top-10 self shares agree with perf report within 0.5 points ($n compared)" ||
		diag_file cmp.txt
done

"$REPORT" t.data >def.txt 2>def.err
ok $? "default view reads the threaded profile"
grep -q '^Counters:' def.txt && grep -q 'task-clock *# [0-9.]* CPUs utilized' def.txt &&
	grep -q 'seconds time elapsed' def.txt
ok $? "counters with CPUs utilized and elapsed time in the header" || diag_file def.txt
mine=$(awk '/seconds time elapsed/ { print $1 }' def.txt)
theirs=$(perf stat report -i t.data.stat 2>&1 | awk '/seconds time elapsed/ { print $1 }')
is "$mine" "$theirs" "elapsed time equals perf stat report's"
tc_mine=$(awk '$3 == "task-clock" { print $1 }' def.txt)
tc_perf=$(perf stat report -i t.data.stat 2>&1 | awk '$3 == "task-clock" { print $1 }')
is "$tc_mine" "$tc_perf" "task-clock total equals perf stat report's"
grep -q '^Event: *cpu-clock$' def.txt && ! grep -q '(0 samples)' def.txt && ! grep -q '^== task-clock' def.txt
ok $? "counters that only count get no sample table"

# ---- per-thread shares vs perf report --sort pid (perf's per-thread key) ----
"$REPORT" --sort thread t.data | awk '$1 ~ /%$/ && $3 ~ /\// { sub(/%/, "", $1); split($3, a, "/"); print a[2], a[1], $1 }' | sort >ours-thr.txt
perf report -i t.data --stdio --no-children --sort pid 2>/dev/null |
	awk '$1 ~ /%$/ && $2 ~ /:/ { sub(/%/, "", $1); split($2, a, ":"); print a[1], a[2], $1 }' | sort >perf-thr.txt
bad=$(join ours-thr.txt perf-thr.txt | awk '$2 != $4 { print $1 } { d = $3 - $5; if (d > 0.5 || d < -0.5) print $1 }')
[ "$(wc -l <ours-thr.txt)" -ge 4 ] && [ "$(wc -l <ours-thr.txt)" = "$(join ours-thr.txt perf-thr.txt | wc -l)" ] && [ -z "$bad" ]
ok $? "--sort thread: comm/tid rows agree with perf report --sort pid" || { diag_file ours-thr.txt; diag_file perf-thr.txt; }
"$REPORT" --sort process t.data | grep -Eq '^100\.00% +[0-9]+  threads/[0-9]+$'
ok $? "--sort process: one comm/pid row with every sample"
"$REPORT" --sort comm,function --no-children t.data | grep -Eq '% +[0-9]+  busy-2 +burn_gamma +threads$'
ok $? "--sort comm,function: combined keys"
"$REPORT" --sort dso t.data | grep -Eq '% +[0-9]+  threads$'
ok $? "--sort library: per-object rows"

# ---- filters ----
total=$(awk '$1 == "Samples:" { print $2 }' def.txt)
tid1=$(awk '$1 ~ /busy-1\// { split($1, a, "/"); print a[2] }' FS='  +' ours-thr.txt)
tid1=$(awk '$2 == "busy-1" { print $1 }' ours-thr.txt)
n1=$("$REPORT" --sort thread t.data | awk -v t="busy-1/$tid1" '$3 == t { print $2 }')
got=$("$REPORT" --tid "$tid1" t.data | awk '$1 == "Samples:" { print $2 }')
is "$got" "$n1" "--tid keeps exactly that thread's samples"
got=$("$REPORT" --comm busy-1 t.data | awk '$1 == "Samples:" { print $2 }')
is "$got" "$n1" "--comm keeps exactly that thread's samples"
pid=$(awk '$2 == "busy-1" { print $1 }' perf-thr.txt)
pid=$("$REPORT" --sort process t.data | awk '$3 ~ /\// { split($3, a, "/"); print a[2] }')
got=$("$REPORT" --pid "$pid" t.data | awk '$1 == "Samples:" { print $2 }')
is "$got" "$total" "--pid of the process keeps every sample"
got=$("$REPORT" --pid 1 t.data | awk '$1 == "Samples:" { print $2 }')
is "$got" "0" "--pid of another process keeps none"
a=$("$REPORT" --time 0,0.1 t.data | awk '$1 == "Samples:" { print $2 }')
b=$("$REPORT" --time 0.1, t.data | awk '$1 == "Samples:" { print $2 }')
[ "$a" -gt 0 ] && [ "$b" -gt 0 ] && [ $((a + b)) -eq "$total" ]
ok $? "--time 0,0.1 and 0.1, split the samples ($a + $b = $total)"
got=$("$REPORT" --dso threads --no-children t.data | awk '/by self time/ { t = 1; next } t && $1 ~ /^[0-9.]+%$/ { print $NF }' | sort -u)
is "$got" "threads" "--dso keeps only samples in that object"

# ---- folded, tree ----
"$REPORT" --folded t.data >folded.txt
sum=$(awk '{ s += $NF } END { print s + 0 }' folded.txt)
# perf script prints the counters first as 7-column rows; samples are "comm tid".
want=$(perf script -i t.data -F comm,tid 2>/dev/null | awk 'NF == 2 && $2 ~ /^[0-9]+$/' | wc -l)
is "$sum" "$want" "--folded counts add up to perf script's samples"
grep -Eq '^clone3;start_thread;worker;burn_alpha [0-9]+$' folded.txt
ok $? "--folded: outermost frame first, ';'-separated"
"$REPORT" --tree s.data >tree.txt
awk '/work_loop  \[split\]/ { t = 1; next } t && /^$/ { exit } t' tree.txt | grep -q '^ *[0-9.]*%  heavy_two_thirds'
ok $? "--tree: heavy_two_thirds under work_loop" || diag_file tree.txt
"$REPORT" --no-inline --callers s.data | awk '/heavy_two_thirds  \[split\]/ { t = 1; next } t && /^$/ { exit } t' | grep -q '^  [0-9.]*%  work_loop'
ok $? "--callers: work_loop calls heavy_two_thirds"

# ---- CSV ----
"$REPORT" --csv csv t.data >csv.out 2>&1
ok $? "--csv writes its files"
perf report -D -i t.data 2>/dev/null | awk '/Aggregated stats/ { a = 1 } a && /TOTAL events/ { print $3; exit }' >perf-total.txt
is "$(($(wc -l <csv/overview.csv) - 1))" "$(cat perf-total.txt)" "overview.csv has a row per record (perf report -D's TOTAL)"
want=$(perf report -D -i t.data 2>/dev/null | awk '/Aggregated stats/ { a = 1 } a && $1 == "SAMPLE" { print $3; exit }')
is "$(awk -F, '$2 == "SAMPLE" { print $3 }' csv/stat.csv)" "$want" "stat.csv counts the SAMPLE records like perf report -D"
is "$(awk -F, 'NR > 1 { s += $7 } END { print s }' csv/processes.csv)" "$total" "processes.csv samples add up"
head -1 csv/results.csv | grep -q '^function,object,self_samples' && grep -q '^"burn_alpha","threads",[0-9]*,[0-9]*,[0-9.]*,[0-9]*,[0-9]*,[0-9.]*,"threads.c:[0-9]*"$' csv/results.csv
ok $? "results.csv: header row, functions with their source file"

# ---- JSON, flame graph, diff ----
"$REPORT" --json t.data >j.json && python3 -m json.tool j.json >/dev/null
ok $? "--json output parses"
got=$(python3 -c 'import json,sys; d = json.load(open("j.json")); print(d["samples"], sum(r["self_samples"] for r in d["events"][0]["rows"]) <= d["samples"])')
is "$got" "$total True" "--json: the sample count and rows"
"$REPORT" --flamegraph fg.svg t.data && python3 - fg.svg <<'PY' >fg.txt
import sys, xml.etree.ElementTree as ET
ns = {'s': 'http://www.w3.org/2000/svg'}
root = ET.parse(sys.argv[1]).getroot()
frames = {g.get('data-name'): g for g in root.iter('{http://www.w3.org/2000/svg}g') if g.get('data-name')}
allw = float(frames['all'].find('s:rect', ns).get('width'))
total = int(frames['all'].get('data-n'))
bad = [n for n, g in frames.items()
       if abs(float(g.find('s:rect', ns).get('width')) / allw - int(g.get('data-n')) / total) > 0.001]
hot = all(n in frames for n in ('burn_alpha', 'burn_beta', 'burn_gamma', 'burn_delta', 'worker'))
print(len(frames), hot, not bad, root.find('s:script', ns) is not None)
PY
set -- $(cat fg.txt)
[ "${2:-}" = True ] && [ "${3:-}" = True ] && [ "${4:-}" = True ]
ok $? "--flamegraph: well-formed SVG with the hot functions, widths proportional to samples ($(cat fg.txt))"
"$REPORT" --flamegraph fg2.svg t.data && cmp -s fg.svg fg2.svg && ! grep -q 'http[s]*://[^"]*\.js' fg.svg
ok $? "--flamegraph output is deterministic and self-contained"
"$REPORT" --diff t.data t.data | grep -q '^No change'
ok $? "--diff of a profile with itself shows no change"
"$REPORT" --no-inline --diff s.data t.data | grep -Eq '^ *[0-9.]+% +0\.00% +-[0-9.]+  heavy_two_thirds'
ok $? "--diff: functions that went away shrink"

# ---- source lines, merging, exit statuses ----
"$REPORT" --sort srcline --no-children s.data | grep -Eq '% +[0-9]+  split\.c:[0-9]+'
ok $? "--sort srcline: split.c:LINE rows"
got=$("$REPORT" -i s.data -i t.data | awk '$1 == "Samples:" { print $2 }')
want=$(($(awk '$1 == "Samples:" { print $2 }' def.txt) + $("$REPORT" s.data | awk '$1 == "Samples:" { print $2 }')))
is "$got" "$want" "-i twice merges two files"
"$REPORT" --sort nope t.data >/dev/null 2>&1
st1=$?
"$REPORT" --diff t.data >/dev/null 2>&1
st2=$?
"$REPORT" --time 2,1 t.data >/dev/null 2>&1
st3=$?
is "$st1$st2$st3" "222" "usage errors exit 2"
printf 'PERFILE2 but not really a perf.data file at all' >bad.data
"$REPORT" --json bad.data >/dev/null 2>bad.err
st=$?
[ $st -eq 1 ] && [ "$(wc -l <bad.err)" -eq 1 ] && grep -q '^autoprof-report: bad.data: ' bad.err
ok $? "bad input: exit 1 with one line naming the file" || diag_file bad.err
done_testing
