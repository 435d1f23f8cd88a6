#!/bin/sh
# The files tell the truth to the tools people open them with: perf script
# output shaped like a perf record file's (the counter totals live in
# FILE.stat, which perf stat report and autoprof-report read), every header
# section perf record writes (hotspot's command and CPU), and a launcher
# whose closing lines say which file holds which command.
. "$(dirname "$0")/lib.sh"
needs "$B/autoprof" "$B/autoprof-report" "$B/progs/split"
plan 26

P=$B/progs
# A sample's first line in perf script: comm, tid, time, period, event.
SAMPLE_RE='^ *[^ ].* [0-9]+ .*[0-9]+\.[0-9]+: +[0-9]+ [^ ]+:'

"$B/autoprof" -o ap.data -- "$P/split" 300 >/dev/null 2>launch.err
perf record -q -g -o pr.data -- "$P/split" 300 >/dev/null 2>&1

# 1-4: perf script's output starts with a sample, with and without -F.
perf script -i ap.data 2>/dev/null | head -1 >ap.first
perf script -i pr.data 2>/dev/null | head -1 >pr.first
grep -Eq "$SAMPLE_RE" ap.first && grep -Eq "$SAMPLE_RE" pr.first
ok $? "perf script: the first line is a sample, as for a perf record file" ||
	{ diag_file ap.first; diag_file pr.first; }
perf script -i ap.data -F comm,tid,time,ip,sym 2>/dev/null | head -1 >ap.f
perf script -i pr.data -F comm,tid,time,ip,sym 2>/dev/null | head -1 >pr.f
[ "$(sed 's/[0-9.]*//g; s/ //g' ap.f)" = "$(sed 's/[0-9.]*//g; s/ //g' pr.f)" ] ||
	grep -Eq '^ *split +[0-9]+ +[0-9]+\.[0-9]+: *$' ap.f
ok $? "perf script -F comm,tid,time,ip,sym: the first line is a sample's" || diag_file ap.f
is "$(perf script -i ap.data 2>/dev/null | grep -c '^CPU  *THREAD')" 0 "no table of counter totals in perf script"
perf script -i ap.data >/dev/null 2>ap.err
clean_stderr ap.err
ok $? "perf script says nothing on stderr" || diag_file ap.err

# 5-7: the totals are in ap.data.stat, for perf stat report and autoprof-report.
perf stat report -i ap.data.stat >psr.txt 2>&1
tc=$(awk '$3 == "task-clock" { gsub(",", "", $1); print $1; exit }' psr.txt)
[ -n "$tc" ] && grep -q "Performance counter stats for 'autoprof $P/split 300'" psr.txt
ok $? "perf stat report -i ap.data.stat prints the totals of the command" || diag_file psr.txt
"$B/autoprof-report" ap.data >rep.txt 2>rep.err
rtc=$(awk '$2 == "msec" && $3 == "task-clock" { print $1; exit }' rep.txt)
is "$rtc" "$tc" "autoprof-report ap.data shows the same task-clock, read from ap.data.stat"
is "$(perf report --header-only -i ap.data 2>/dev/null | grep -c '^# event : name')" 1 \
	"the profile holds the sampling event only, as perf record writes it"

# 8-10: every header section perf record writes, with the same machine description.
missing() { perf report --header-only -i "$1" 2>/dev/null | sed -n 's/^# missing features: //p' | tr ' ' '\n' | grep . | sort; }
missing ap.data >ap.miss
missing pr.data >pr.miss
is "$(comm -23 ap.miss pr.miss | tr '\n' ' ')" "" "every feature section perf record writes is in our file"
machine() {
	perf report --header-only -I -i "$1" 2>/dev/null |
		grep -E '^# (hostname|os release|arch|nrcpus|cpudesc|cpuid|total memory|sibling|CPU [0-9]|node[0-9]+ cpu list|pmu mappings|CPU cache|  ?L[0-9]|memory nodes|  *[0-9]+ \[)'
}
machine ap.data >ap.mach
machine pr.data >pr.mach
cmp -s ap.mach pr.mach && [ "$(wc -l <pr.mach)" -ge 12 ]
ok $? "perf report --header-only -I: the same CPU, topology, caches, PMUs and memory as perf record's" ||
	diff pr.mach ap.mach | sed 's/^/#   /' >&2
perf report --header-only -i ap.data 2>/dev/null | grep -q "^# cmdline : autoprof $P/split 300 *\$"
ok $? "the cmdline section is the recording command: autoprof and the program"

# 11-13: hotspot's parser: no unhandled records, the CPU and the command.
if [ -x "$PERFPARSER" ]; then
	timeout 120 "$PERFPARSER" --input ap.data --output parsed.bin >pp.txt 2>&1
	is "$(grep -c -i unhandled pp.txt)" 0 "hotspot-perfparser handles every record" || diag_file pp.txt
	cpuid=$(perf report --header-only -i pr.data 2>/dev/null | sed -n 's/^# cpuid : //p')
	[ -n "$cpuid" ] && grep -a -q -F "$cpuid" parsed.bin
	ok $? "hotspot gets the CPU id ($cpuid)"
	grep -a -q -F "$P/split" parsed.bin
	ok $? "hotspot gets the command (its first word dropped, as for 'perf record')"
else
	skip "hotspot-perfparser not installed"
	skip "hotspot-perfparser not installed"
	skip "hotspot-perfparser not installed"
fi

# 14: the closing line: the file, its samples and the rate delivered, lost samples, counters and command.
n=$(perf script -i ap.data -F time 2>/dev/null | grep -c .)
grep -q "^autoprof: wrote ap.data ($n samples at [0-9]* Hz, 0 lost; counters in ap.data.stat) for $P/split 300\$" launch.err
ok $? "the closing line names the file, its $n samples and rate, 0 lost, the counters and the command" ||
	diag_file launch.err

# 15-16: a no-PMU warning is one plain line, once per run (not again after an exec).
"$B/autoprof" -o ex.data -- sh -c "exec $P/split 50" >/dev/null 2>ex.err
w=$(grep -c 'PMU' ex.err)
within "$w" 0 1 "at most one line about the PMU for a run with an exec" || diag_file ex.err
! grep -q 'No such file or directory\|Operation not supported' ex.err
ok $? "no raw errno text in the warnings" || diag_file ex.err

# 17-20: a process tree with --per-process: each file with its pid, samples and command,
# most samples first.
mkdir tree && cd tree || exit 1
"$B/autoprof" --per-process -o t.data -- sh -c "$P/split 30 >/dev/null; $P/split 300 >/dev/null" 2>tree.err
first=$(sed -n '/^autoprof: wrote/{n;p;q}' tree.err)
file=$(echo "$first" | awk '{ print $2 }')
pid=$(echo "$first" | awk '{ print $4 }')
tn=$(perf script -i "$file" -F time 2>/dev/null | grep -c .)
echo "$first" | grep -q "^autoprof:   t\.data\.$pid  *pid $pid  *$tn samples at [0-9]* Hz, 0 lost  *$P/split 300\$"
ok $? "the closing lines list the real program's file first, with its pid, $tn samples and command" ||
	diag_file tree.err
grep -q "^autoprof:   t\.data  *pid [0-9]*  .*sh -c " tree.err
ok $? "and the shell's file with its command" || diag_file tree.err
"$B/autoprof-report" --list >list.txt 2>list.err
awk -v f="$file" -v p="$pid" -v n="$tn" '$1 == f && $2 == p && $3 == n && $4 == 0 && $5 ~ /s$/ && $6 ~ /split$/ && $7 == 300 { ok = 1 } END { exit !ok }' list.txt &&
	[ "$(grep -c '^t\.data' list.txt)" = "$(ls t.data* | grep -cv '\.stat$')" ]
ok $? "autoprof-report --list shows every profile of the directory with pid, samples and command" ||
	diag_file list.txt
# perf.data* names t.data.stat too: its totals are counted once.
ttc=$(perf stat report -i t.data.stat 2>&1 | awk '$3 == "task-clock" { print $1; exit }')
"$B/autoprof-report" t.data* >all.txt 2>&1
is "$(awk '$2 == "msec" && $3 == "task-clock" { print $1; exit }' all.txt)" "$ttc" \
	"autoprof-report t.data* counts the counters once (t.data.stat as an input and beside t.data)"
cd ..

# 21-23: a statically linked program: it runs from outside the process (the launcher's
# own sampling), its status is kept, one line says which mode and why, and a run too
# short for one sample says why its file has none.
printf 'int main(void) { return 3; }\n' >st.c
if cc -static -o st st.c 2>/dev/null; then
	"$B/autoprof" -F 10 -o st.data -- ./st >st.out 2>st.err # (10 Hz: no sample, however slow the start)
	is "$?" 3 "a static program runs with its own exit status"
	grep -q 'profiling ./st from outside (statically linked: LD_PRELOAD cannot enter it)' st.err
	ok $? "one line says it is statically linked and profiled from outside" || diag_file st.err
	grep -q 'st.data: 0 samples: ./st did not run in user mode for one sampling period' st.err
	ok $? "its file of 0 samples says why" || diag_file st.err
else
	skip "no static libc to link a static program"
	skip "no static libc to link a static program"
	skip "no static libc to link a static program"
fi
# 24-25: the machine's description is kept for the next images of this boot
# (the user's control directory, "machine"): read from it, the same sections;
# and no sysfs cache file read in that image's start-up.
cdir=${XDG_RUNTIME_DIR:+$XDG_RUNTIME_DIR/autoprof}
cdir=${cdir:-/tmp/autoprof-$(id -u)}
rm -f "$cdir/machine"
env LD_PRELOAD="$LIB" AUTOPROF_OUTPUT=m1.data "$P/split" 50 >/dev/null 2>&1
strace -f -qq -e trace=openat -o m2.strace env LD_PRELOAD="$LIB" AUTOPROF_OUTPUT=m2.data \
	"$P/split" 50 >/dev/null 2>&1
machine m1.data >m1.mach
machine m2.data >m2.mach
[ -s "$cdir/machine" ] && cmp -s m1.mach m2.mach && [ "$(wc -l <m2.mach)" -ge 12 ]
ok $? "the machine's description kept in $cdir/machine gives the same sections" ||
	diff m1.mach m2.mach | sed 's/^/#   /' >&2
is "$(grep -c '/cache/index' m2.strace)" 0 "an image started with it kept reads no sysfs cache file"
# A forked child that writes its title over argv (nginx, postgres): its
# file's cmdline section is its own at its end, not its parent's.
mkdir -p rt
AUTOPROF_OUTPUT=$T/rt/r.data AUTOPROF_QUIET=1 timeout -s KILL 60 env LD_PRELOAD="$LIB" \
	"$P/retitle" padding-argument-long-enough >rt.out 2>rt.err
for f in rt/r.data*; do perf report --header-only -i "$f" 2>/dev/null | grep '^# cmdline'; done >rt.cmd
grep -q '^# cmdline : autoprof retitle-child-title *$' rt.cmd &&
	grep -q "^# cmdline : autoprof $P/retitle padding-argument-long-enough *\$" rt.cmd
ok $? "a forked child's retitled command line is its file's cmdline; the parent's its own" ||
	diag_file rt.cmd
done_testing
