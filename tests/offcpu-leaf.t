#!/bin/sh
# Off-CPU profiles name the blocking call: in tests/progs/lockwait, one
# function (locked_update) waits for a mutex, sleeps in usleep inside the lock
# and in nanosleep outside it; a reader thread waits in read. Each wait's leaf
# frame is the libc function the program called, under locked_update (or
# reader, a futex wait through syscall() under park), in perf report, perf script, hotspot's parser, autoprof-report's
# views and exports; and every export says the time is wall-clock time:
# nanoseconds in pprof, speedscope and JSON, seconds in the text views.
. "$(dirname "$0")/lib.sh"
needs "$B/progs/lockwait"
plan 20

timeout -s KILL 60 "$B/progs/lockwait" 100 >plain.out 2>&1
timeout -s KILL 60 env AUTOPROF_OFFCPU=1 AUTOPROF_QUIET=1 LD_PRELOAD="$LIB" \
	"$B/progs/lockwait" 100 >prof.out 2>prof.err
is "$?" 0 "lockwait runs under the library"
cmp -s plain.out prof.out
ok $? "same output as without it" || diag_file prof.out

# self SYM-REGEX: the offcpu-time self share perf report gives the symbols matching it.
perf report -i perf.data --stdio --no-children --sort sym -g none 2>/dev/null >rep.txt
self() {
	awk -v re="$1" '/^# Samples: .* of event / { on = ($0 ~ /offcpu-time/); next }
		on && $1 ~ /%$/ && $NF ~ re { sub(/%/, "", $1); s += $1 } END { printf "%.2f\n", s }' rep.txt
}
within "$(self '^pthread_mutex_lock')" 3 60 "perf report: pthread_mutex_lock is a leaf of its own" || diag_file rep.txt
within "$(self '^usleep$')" 3 60 "perf report: usleep is a leaf of its own"
within "$(self 'nanosleep')" 3 60 "perf report: nanosleep is a leaf of its own"
within "$(self '^read$')" 3 60 "perf report: read is a leaf of its own"
is "$(self '^locked_update$')" 0.00 "perf report: no wait is charged to locked_update itself"

# perf script: each wait's first frame is the call, its second the caller.
perf_script perf.data -F event,ip,sym >script.txt
awk '/offcpu-time:/ { want = 1; next }
	want == 1 { leaf = $2; want = 2; next }
	want == 2 { pair[leaf " <- " $2]++; want = 0 }
	END { for (p in pair) print pair[p], p }' script.txt | sort -rn >pairs.txt
grep -q ' pthread_mutex_lock[^ ]* <- locked_update$' pairs.txt &&
	grep -q ' usleep <- locked_update$' pairs.txt &&
	grep -q ' [_a-z]*nanosleep <- locked_update$' pairs.txt && grep -q ' read <- reader$' pairs.txt
ok $? "perf script: the blocking call is the leaf, its caller next" || diag_file pairs.txt
n=$(sed -n 's/^\([0-9]*\) syscall <- park$/\1/p' pairs.txt)
within "${n:-0}" 50 100 "a futex wait made through syscall() (as Rust's std does): syscall under park" ||
	diag_file pairs.txt

# hotspot's parser reads the file and gets the calls' names.
if [ -x "$PERFPARSER" ]; then
	timeout -s KILL 60 "$PERFPARSER" --input perf.data --output parsed.bin >pp.txt 2>&1
	is "$(grep -c -i unhandled pp.txt)" 0 "hotspot-perfparser reads the file" || diag_file pp.txt
	grep -a -q pthread_mutex_lock parsed.bin && grep -a -q usleep parsed.bin
	ok $? "hotspot gets the blocking calls as frames"
else
	skip "hotspot-perfparser not installed"
	skip "hotspot-perfparser not installed"
fi

# autoprof-report: the calls by self time, in seconds.
"$REPORT" -e offcpu-time perf.data >ar.txt 2>&1
grep -q '^  Self%  *Seconds  Function' ar.txt &&
	grep -q '^ *[0-9.]*%  *[0-9]*\.[0-9][0-9][0-9]  pthread_mutex_lock' ar.txt &&
	grep -q '^ *[0-9.]*%  *[0-9]*\.[0-9][0-9][0-9]  usleep ' ar.txt
ok $? "autoprof-report: the blocking calls by self time, in seconds" || diag_file ar.txt
total=$(awk '/^# Samples: .* of event / { on = ($0 ~ /offcpu-time/); next }
	on && /^# Event count/ { print $NF; exit }' rep.txt)
grep -q "^Off-CPU: *$(awk -v t="$total" 'BEGIN { printf "%.3f", t / 1e9 }') s in [0-9]* records" ar.txt
ok $? "autoprof-report's header: the time off-CPU ($total ns) and the waits" || diag_file ar.txt
"$REPORT" --tree -e offcpu-time perf.data >tree.txt 2>&1
grep -q '^ *[0-9.]*%  pthread_mutex_lock[^ ]*  ([0-9]*\.[0-9]* s)$' tree.txt
ok $? "autoprof-report --tree: the call under its caller, in seconds" || diag_file tree.txt

# Exports: the unit is nanoseconds, and the time adds up.
"$REPORT" --pprof p.pb.gz -e offcpu-time perf.data >/dev/null 2>&1
if command -v go >/dev/null; then
	timeout -s KILL 60 go tool pprof -raw p.pb.gz >raw.txt 2>&1
	grep -q 'offcpu-time/nanoseconds' raw.txt
	ok $? "pprof: the sample type is offcpu-time in nanoseconds" || diag_file raw.txt
	timeout -s KILL 60 go tool pprof -top p.pb.gz >top.txt 2>&1
	grep -q 'pthread_mutex_lock' top.txt && grep -q 'usleep' top.txt
	ok $? "pprof -top: the blocking calls" || diag_file top.txt
else
	skip "go not installed"
	skip "go not installed"
fi
"$REPORT" --speedscope ss.json -e offcpu-time perf.data >/dev/null 2>&1
python3 -c 'import json, sys; d = json.load(open("ss.json")); sys.exit(not all(p["unit"] == "nanoseconds" for p in d["profiles"]))'
ok $? "speedscope: every profile's unit is nanoseconds"
"$REPORT" --json -e offcpu-time perf.data >j.json 2>&1
got=$(python3 -c 'import json; d = json.load(open("j.json")); e = d["events"][0]; print(e["event"], e["period_unit"], e["period"])')
is "$got" "offcpu-time nanoseconds $total" "JSON: the event's period is in nanoseconds, the same total"
"$REPORT" --folded -e offcpu-time perf.data >f.txt 2>&1
is "$(awk '{ s += $NF } END { printf "%.0f\n", s }' f.txt)" "$total" \
	"folded: the stacks weigh their nanoseconds, not their records"
"$REPORT" --flamegraph f.svg -e offcpu-time perf.data >/dev/null 2>&1
grep -q "offcpu-time, $(awk -v t="$total" 'BEGIN { printf "%.3f", t / 1e9 }') s<" f.svg &&
	grep -q '<title>usleep \[libc[^]]*\] ([0-9]*\.[0-9][0-9][0-9] s, [0-9.]*%)</title>' f.svg
ok $? "the flame graph: seconds in the subtitle and the frames' tooltips"
done_testing
