#!/bin/sh
# Outside mode with the library's service options (issue 20, doc/outside.md):
# windows (--window, --keep: one finished file per window, FILE.<UTC stamp>,
# the closing lines and the .stat sibling of the library's), aggregation
# (--aggregate), `autoprof ctl PID start|stop|dump|status` served by the
# launcher (PID the program's or the launcher's own), --start-paused, and
# the options that do not apply refused in one line; -p with windows and
# ctl. On a static C program and a Go CGO_ENABLED=0 program; each file read
# by perf report, perf script, hotspot-perfparser and autoprof-report. And
# in the library's mode: the one line at each exec of a static program and
# the launcher's closing line naming them.
. "$(dirname "$0")/lib.sh"
needs "$B/autoprof" "$REPORT"
echo "TAP version 13"
A=$B/autoprof
SRC=$ROOT/tests/outside
STAMP='[0-9]\{8\}T[0-9]\{6\}\.[0-9]\{3\}'

cc -static -O2 -g -o hot-static "$SRC/hot.c" 2>cc.err || diag_file cc.err
GO=$(command -v go || echo /usr/lib/go/bin/go)
if [ -x "$GO" ]; then
	mkdir -p "$B/outside-go/gocache" "$B/outside-go/gopath"
	(GOCACHE=$B/outside-go/gocache GOPATH=$B/outside-go/gopath GOFLAGS=-mod=mod \
		GOPROXY=off GO111MODULE=off CGO_ENABLED=0 timeout -s KILL 100 \
		"$GO" build -o go-static "$SRC/spin.go") 2>go.err || diag_file go.err
fi

# windows NAME STATUS SECONDS CMD...: CMD with --window SECONDS into
# NAME.data.<stamp> files: the status kept, two files or more, each
# readable, .stat on the last.
windows() {
	_name=$1 _want=$2 _win=$3
	shift 3
	timeout -s KILL 60 "$A" --window "$_win" -o "$_name.data" "$@" >"$_name.out" 2>"$_name.err"
	is "$?" "$_want" "$_name --window: the command's exit status is kept"
	ls | grep "^$_name\.data\.$STAMP\$" >"$_name.files"
	_nf=$(grep -c . "$_name.files")
	within "$_nf" 2 1000 "$_name --window $_win: one file per window, named FILE.<UTC stamp>"
	grep -q "^autoprof: wrote $_nf files, one per process image and window" "$_name.err"
	ok $? "$_name --window: the library's closing lines" || diag_file "$_name.err"
	_bad=0 _all=0
	while read -r _f; do
		_s=$(nsamples "$_f")
		_all=$((_all + _s))
		[ "$_s" -gt 0 ] || _bad=$((_bad + 1))
	done <"$_name.files"
	is "$_bad" 0 "$_name --window: perf script reads samples in every window's file"
	"$PERFPARSER" --input "$(sed -n 2p "$_name.files")" --print-stats >"$_name.pp" 2>&1
	ok $? "$_name --window: hotspot-perfparser reads a later window's file" ||
		tail -5 "$_name.pp" | sed 's/^/#   /' >&2
	_last=$(tail -1 "$_name.files")
	[ -s "$_last.stat" ] && [ "$(ls | grep -c "^$_name\.data.*\.stat\$")" = 1 ]
	ok $? "$_name --window: the counters in the last window's FILE.stat, as the library"
	"$REPORT" $(cat "$_name.files") >"$_name.rep" 2>"$_name.rerr" &&
		grep -q "^Samples: *$_all\b" "$_name.rep"
	ok $? "$_name --window: autoprof-report reads the files together ($_all samples)" ||
		{ diag_file "$_name.rep"; diag_file "$_name.rerr"; }
}

windows hot-static 3 0.3 ./hot-static 12
perf report -i "$(tail -1 hot-static.files)" --stdio --no-children --sort sym 2>wp.err |
	grep -q "\] hot_leaf\$"
ok $? "hot-static --window: perf report names hot_leaf in a window's file"
# A later window's file names its samples' objects (the maps are carried over).
perf report -i "$(sed -n 2p hot-static.files)" --stdio --no-children --sort dso 2>wp2.err |
	grep -q "hot-static"
ok $? "hot-static --window: a later window's file has the maps (its samples name hot-static)"

timeout -s KILL 60 "$A" --window 0.2 --keep 2 -o keep.data ./hot-static 12 >keep.out 2>keep.err
is "$(ls | grep -c "^keep\.data\.$STAMP\$")" 2 "--keep 2: the newest two windows kept"

if [ -x go-static ]; then
	windows go-static 4 0.1 ./go-static 20
else
	skip "go-static: go build failed or go is missing"
fi

# --aggregate: merged records, whose periods add up to the samples.
timeout -s KILL 60 "$A" --aggregate -o agg.data ./hot-static 12 >agg.out 2>agg.err
is "$?" 3 "--aggregate: the command's exit status is kept"
! grep -q "not applied" agg.err
ok $? "--aggregate: applied from outside (no refusal line)" || diag_file agg.err
recs=$(nsamples agg.data)
"$REPORT" agg.data >agg.rep 2>&1
merged=$(sed -n 's/^Samples: *\([0-9]*\) (in \([0-9]*\) merged records).*/\1 \2/p' agg.rep)
set -- $merged
within "${1:-0}" 300 100000 "--aggregate: autoprof-report counts the samples merged"
is "${2:-x}" "$recs" "--aggregate: perf script sees the merged records ($recs, ${1:-?} samples)"
within "$recs" 1 $((${1:-0} / 10)) "--aggregate: far fewer records than samples"
closing=$(sed -n 's/^autoprof: wrote agg.data (\([0-9]*\) samples.*/\1/p' agg.err)
within "${closing:-0}" $((${1:-0} * 98 / 100)) $((${1:-0} * 102 / 100 + 1)) \
	"--aggregate: the closing line counts the samples merged, not the records"
perf report -i agg.data --stdio --no-children --sort sym 2>ap.err | grep -q "\] hot_leaf\$"
ok $? "--aggregate: perf report names hot_leaf"
"$PERFPARSER" --input agg.data --print-stats >agg.pp 2>&1
ok $? "--aggregate: hotspot-perfparser reads it" || tail -5 agg.pp | sed 's/^/#   /' >&2
grep -q "hot_leaf" agg.rep
ok $? "--aggregate: autoprof-report names hot_leaf" || diag_file agg.rep

# pids_under TIMEOUT_PID PROGRAM: lpid, the launcher timeout runs, and ppid,
# its child once that runs ./PROGRAM (waits up to 5 s).
pids_under() {
	lpid= ppid=
	for _i in $(seq 50); do
		lpid=$(pgrep -P "$1" | head -1)
		[ -n "$lpid" ] && ppid=$(pgrep -P "$lpid" | head -1)
		[ -n "$ppid" ] && [ "$(readlink /proc/$ppid/exe)" = "$T/$2" ] && return
		sleep 0.1
	done
}

# ctl: started paused; started, stopped (through the launcher's pid), dumped.
timeout -s KILL 60 "$A" --start-paused -o ctl.data ./hot-static 40 >ctl.out 2>ctl.err &
tpid=$!
pids_under $tpid hot-static
"$A" ctl "$ppid" status >st1.out 2>st1.err
grep -q "^pid $ppid: sampling off" st1.out
ok $? "ctl PROGRAM status: sampling off (--start-paused)" || { diag_file st1.out; diag_file st1.err; }
"$A" ctl "$ppid" start >st2.out 2>st2.err
grep -q "^pid $ppid: sampling started; file ctl.data" st2.out
ok $? "ctl PROGRAM start: started" || { diag_file st2.out; diag_file st2.err; }
sleep 0.8
"$A" ctl "$lpid" stop >st3.out 2>st3.err
grep -q "^pid $lpid: sampling stopped; [1-9][0-9]* samples so far are in ctl.data" st3.out
ok $? "ctl LAUNCHER stop: stopped, samples so far" || { diag_file st3.out; diag_file st3.err; }
"$A" ctl "$ppid" dump >st4.out 2>st4.err
n_dump=$(nsamples ctl.data)
within "$n_dump" 1 100000 "ctl dump: perf script reads the file while it runs ($n_dump samples)"
sleep 0.5
"$A" ctl "$ppid" status >st5.out 2>st5.err
grep -q "^pid $ppid: sampling off" st5.out
ok $? "ctl status after stop: off" || diag_file st5.out
wait $tpid
is "$?" 3 "ctl: the command's exit status is kept"
n_end=$(nsamples ctl.data)
within "$n_end" "$n_dump" $((n_dump + 50)) "ctl: nothing sampled after the stop ($n_end vs $n_dump)"
grep -q "^autoprof: wrote ctl.data ([1-9][0-9]* samples" ctl.err
ok $? "ctl: the closing line" || diag_file ctl.err
ls "${XDG_RUNTIME_DIR:-/nonexistent}/autoprof/$ppid" "/tmp/autoprof-$(id -u)/$ppid" \
	"/tmp/autoprof-$(id -u)/$lpid" >/dev/null 2>&1
ok $((!$?)) "ctl: the endpoints are removed at the end"
"$A" ctl "$ppid" status >st6.out 2>st6.err
is "$?" 1 "ctl after the end: status 1, one line"

# Paused the whole run: 0 samples, and the closing lines say why.
timeout -s KILL 60 "$A" --start-paused -o paused.data ./hot-static 3 >p.out 2>p.err
grep -q "0 samples: sampling was off the whole run" p.err
ok $? "--start-paused, never started: the 0-sample line says why" || diag_file p.err

# -p: ctl reaches the attached process's profile through the launcher.
cc -O2 -g -pthread -o late "$SRC/late.c"
./late 2 >late.out 2>&1 &
lpid2=$!
sleep 0.2
timeout -s KILL 30 "$A" -o att.data -p $lpid2 >att.out 2>att.err &
apid=$!
sleep 0.6
"$A" ctl $lpid2 status >atts.out 2>atts.err
grep -q "^pid $lpid2: sampling on" atts.out
ok $? "-p: ctl TARGET status answers (the target sees no signal)" || diag_file atts.err
"$A" ctl $lpid2 stop >attp.out 2>attp.err
grep -q "^pid $lpid2: sampling stopped" attp.out
ok $? "-p: ctl TARGET stop" || diag_file attp.err
wait $lpid2
is "$?" 0 "-p: the target's exit status is its own"
wait $apid
is "$?" 0 "-p: autoprof ends with the target"
within "$(nsamples att.data)" 1 100000 "-p: perf script reads the samples up to the stop"

# -p with windows: the maps synthesized at the attach go into every window's file.
./late 1.5 >latew.out 2>&1 &
wpid=$!
sleep 0.2
timeout -s KILL 30 "$A" --window 0.3 -o pw.data -p $wpid >pw.out 2>pw.err
wait $wpid
ls | grep "^pw\.data\.$STAMP\$" >pw.files
within "$(grep -c . pw.files)" 2 100 "-p --window: one file per window"
perf report -i "$(tail -1 pw.files)" --stdio --no-children --sort sym 2>pwr.err |
	grep -q "\] late_burn\$"
ok $? "-p --window: the last window's file names late_burn (the attach's maps carried over)" ||
	diag_file pw.err

# Go with --start-paused, started by ctl: its samples name main.work.
if [ -x go-static ]; then
	timeout -s KILL 60 "$A" --start-paused -o goctl.data ./go-static 60 >goctl.out 2>goctl.err &
	tpid=$!
	pids_under $tpid go-static
	"$A" ctl "$ppid" start >goctl1.out 2>&1
	grep -q "sampling started" goctl1.out
	ok $? "Go --start-paused: ctl start" || diag_file goctl1.out
	wait $tpid
	is "$?" 4 "Go under ctl: the exit status is kept"
	perf report -i goctl.data --stdio --no-children --sort sym 2>gr.err | grep -q "\] main.work\$"
	ok $? "Go under ctl: perf report names main.work" || diag_file goctl.err
else
	skip "Go ctl: no go-static"
	skip "Go ctl: no go-static"
	skip "Go ctl: no go-static"
fi

# What does not apply: one line naming it.
AUTOPROF_OFFCPU=1 AUTOPROF_MODE=timer timeout -s KILL 30 "$A" -o na.data ./hot-static 2 \
	>na.out 2>na.err
grep -c "not applied from outside" na.err >na.n
is "$(cat na.n)" 1 "options that do not apply: one line"
grep -q "^autoprof: --off-cpu, --mode: not applied from outside" na.err
ok $? "options that do not apply: named" || diag_file na.err

# Preload mode: a static program exec'd (or spawned) by a profiled dynamic
# one is not entered by the library: one line per such exec names it.
cc -O2 -g -o hot-dyn "$SRC/hot.c"
timeout -s KILL 60 "$A" -o tree.data -- sh -c './hot-static 1; ./hot-dyn 1; exec ./hot-static 1' \
	>tree.out 2>tree.err
is "$?" 3 "static children under the library: the exit status is kept"
is "$(grep -c "execs static binary ./hot-static: not profiled by the library; .autoprof --outside. profiles it" tree.err)" 2 \
	"static children under the library: one line per static exec"
! grep -q "execs static binary ./hot-dyn" tree.err
ok $? "static children under the library: no line for a dynamic child" || diag_file tree.err
grep -q "^autoprof:     pid [0-9]* *[1-9][0-9]* samples.* ./hot-dyn 1" tree.err
ok $? "static children under the library: the dynamic child is profiled" || diag_file tree.err
grep -q "^autoprof: not profiled: 2 runs of static programs the library cannot enter ($T/hot-static (2 times)); .autoprof --outside -- CMD. profiles the whole tree" tree.err
ok $? "static children under the library: the closing lines name them" || diag_file tree.err
timeout -s KILL 60 "$A" -o dyn.data -- sh -c './hot-dyn 1' >dyn.out 2>dyn.err
! grep -q "static" dyn.err
ok $? "a tree without static programs: no such line" || diag_file dyn.err
printf '%s\n' '#include <spawn.h>' '#include <sys/wait.h>' 'extern char **environ;' \
	'int main(void) { char *argv[] = {"hot-static", "1", 0}; pid_t p; int st = 0;' \
	'if (posix_spawnp(&p, "./hot-static", 0, 0, argv, environ) || waitpid(p, &st, 0) != p) return 1;' \
	'return WEXITSTATUS(st); }' >spawn.c
cc -o spawn spawn.c
LD_PRELOAD=$LIB AUTOPROF_OUTPUT=spawn.data timeout -s KILL 60 ./spawn >spawn.out 2>spawn.err
st=$?
grep -q "^autoprof: pid [0-9]* execs static binary ./hot-static: not profiled" spawn.err &&
	[ "$st" = 3 ]
ok $? "posix_spawnp of a static program under the library: one line, status kept" ||
	diag_file spawn.err

echo "1..$_n"
done_testing
