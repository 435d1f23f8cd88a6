#!/bin/sh
# build/autoprof: flags become AUTOPROF_* variables, the command is exec'd.
. "$(dirname "$0")/lib.sh"
plan 37

"$B/autoprof" --help >help.txt 2>&1
ok $? "autoprof --help exits 0"
missing=
for v in $(sed -n 's/^[ \t]*X(\([A-Z_]*\), *\(LIB\|LAUNCHER\),.*/\1/p' "$ROOT/include/autoprof/env.h"); do
	grep -q "AUTOPROF_$v" help.txt || missing="$missing $v"
done
is "$missing" "" "--help lists every AUTOPROF_* variable the launcher and the library read"

steal_mark
"$B/autoprof" -q -o out.data -F 500 -- "$B/progs/split" 600 >out.txt 2>err.txt
is "$?" 0 "the profiled command exits 0"
is "$(cat out.txt)" "split: done" "its output is unchanged"
[ -f out.data ] && [ ! -e perf.data ]
ok $? "-o names the output file"
n=$(nsamples out.data)
within "$n" 240 $((360 + $(stolen_ms) / 2)) "-F 500 gives about 500 samples per CPU-second (0.6 s)"
clean_stderr err.txt
ok $? "-q keeps stderr empty" || diag_file err.txt

"$B/autoprof" -q -o cg.data -g fp -- "$B/progs/split" 200 >/dev/null 2>&1
perf report -i cg.data --stdio --header-only 2>/dev/null | grep -q 'sample_type = .*CALLCHAIN'
ok $? "-g fp still writes call chains"

"$B/autoprof" -- sh -c 'exit 7' 2>/dev/null
is "$?" 7 "the command's exit status comes back through the launcher"

"$B/autoprof" -- /nonexistent/program 2>err.txt
is "$?" 127 "a command that does not exist exits 127"
grep -q "cannot run '/nonexistent/program'" err.txt
ok $? "with a one-line error naming it" || diag_file err.txt

"$B/autoprof" --no-such-flag -- true >/dev/null 2>&1
is "$?" 2 "an unknown flag is a usage error"

"$B/autoprof" -- "$B/progs/life" fork "$B/progs" >/dev/null 2>err.txt
grep -q '^autoprof: wrote perf.data (' err.txt &&
	grep -q '^autoprof:   it holds 2 process images' err.txt &&
	grep -q '^autoprof:     pid [0-9]' err.txt
ok $? "at the end the launcher names the run's one file and the process images in it" ||
	diag_file err.txt

"$B/autoprof" -q -- "$B/progs/life" sigsegv "$B/progs" >/dev/null 2>&1
is "$?" 139 "a command killed by SIGSEGV: the launcher dies of SIGSEGV too (139)"

"$B/autoprof" -q -o sleep.data -- "$B/progs/life" sleep "$B/progs" >out.txt 2>&1 &
lpid=$!
i=0
while ! grep -q sleeping out.txt 2>/dev/null && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
kill -TERM $lpid
wait $lpid
is "$?" 143 "kill -TERM to the launcher reaches the command, which dies of it"
perf report -i sleep.data --stdio >/dev/null 2>rep.err && clean_stderr rep.err
ok $? "and its file is finished and reads cleanly" || diag_file rep.err
# Bad flags are refused before anything runs: one line naming the flag, status 2.
for bad in "-F abc:-F/--freq" "-e bogus:-e/--event" "-o /nonexistent/dir/x.data:-o/--output"; do
	args=${bad%%:*}
	flag=${bad#*:}
	# shellcheck disable=SC2086
	"$B/autoprof" $args -- sh -c 'touch ran' >out.txt 2>err.txt
	st=$?
	[ "$st" = 2 ] && [ ! -e ran ] && [ "$(wc -l <err.txt)" = 1 ] && grep -q -- "$flag" err.txt
	ok $? "autoprof $args: exit 2, the command not run, one line naming $flag" || diag_file err.txt
	rm -f ran
done
AUTOPROF_QUIET=1 "$B/autoprof" -F 500 -- sh -c 'touch ran'
[ -e ran ]
ok $? "good flags: the command runs"

# The closing line names only files this run wrote: a run whose library
# refuses (cycles where the machine has no PMU) does not name the file an
# earlier run left 0.1 s before, in the same second most of the time.
if perf stat -x, -e cycles true 2>&1 | grep -q "not supported"; then
	"$B/autoprof" -q -o stale.data -- "$B/progs/demo" >/dev/null 2>&1
	touch -d "@$(awk -v t="$(date +%s.%N)" 'BEGIN { printf "%.3f", t - 0.1 }')" stale.data
	"$B/autoprof" -e cycles -o stale.data -- "$B/progs/demo" >/dev/null 2>stale.err
	! grep -q 'stale.data' stale.err
	ok $? "a run that writes no file does not name an earlier run's" || diag_file stale.err
else
	skip "the machine has cycles: the library would not refuse"
fi
# The closing line counts the CPU event's samples; the records of the other
# events (here the allocations of --memory) are named apart, not added to them.
"$B/autoprof" --memory --memory-interval 1 -o mem.data -- "$B/progs/memtruth" >/dev/null 2>mem.err
# (counted by perf script: perf report's header says "1K" from a thousand on, which a
# slower VM reaches)
cpu=$(perf script -i mem.data -F event 2>/dev/null | grep -c '^ *cpu-clock')
line=$(grep 'wrote mem.data' mem.err)
[ "$cpu" = 0 ] && cpu=
echo "$line" | grep -Eq "wrote mem.data \($cpu samples at [0-9]+ Hz, [0-9]+ lost, [0-9]+ records of other events" &&
	[ -n "$cpu" ]
ok $? "with --memory the closing line's samples are the CPU event's ($cpu), the allocations named apart" ||
	{ diag "$line"; diag_file mem.err; }
# The launcher's fixed cost: a run of the library's mode loads none of the
# reader's libraries (libdw, libdebuginfod and the ~30 of libcurl it pulled
# in: 37 shared objects relocated at every run, before main); autoprof-report
# loads libdebuginfod only when DEBUGINFOD_URLS asks (elffile.c).
"$B/autoprof" -q -o maps.data -- sh -c 'cat /proc/$PPID/maps' >maps.txt 2>/dev/null
heavy=$(awk '$6 ~ /\.so/ { n = $6; sub(/.*\//, "", n); print n }' maps.txt | sort -u |
	grep -E '^lib(dw|debuginfod|curl|gnutls|crypto|ssl|ldap|krb5)[-.]' | tr '\n' ' ')
grep -q '/autoprof$' maps.txt && [ -z "$heavy" ]
ok $? "the launcher of a plain run maps none of the reader's libraries${heavy:+ (maps: $heavy)}" ||
	diag "$(awk '$6 ~ /\.so/ { print $6 }' maps.txt | sort -u | tr '\n' ' ')"
# and none at all: it is linked static-pie (libelf, libz, libc), no loader
# opens, maps and relocates an object before its main.
others=$(awk '$6 ~ /\.so/ { n = $6; sub(/.*\//, "", n); print n }' maps.txt | sort -u | tr '\n' ' ')
is "$others" "" "the launcher of a plain run maps no shared library (static-pie)" ||
	diag "$(awk '$6 ~ /\.so/ { print $6 }' maps.txt | sort -u | tr '\n' ' ')"
LD_DEBUG=libs "$REPORT" --version >/dev/null 2>libs.txt
! grep -Eq 'lib(debuginfod|curl)' libs.txt && grep -q 'calling init' libs.txt
ok $? "autoprof-report starts without libdebuginfod or libcurl" || diag "$(grep -c 'calling init' libs.txt) inits"

# The modes that profile from outside are autoprof-outside's: autoprof
# becomes it (exec: same pid, the command its child), a plain run stays autoprof.
"$B/autoprof" -q -o plain.data -- sh -c 'readlink /proc/$PPID/exe' >exe.txt 2>/dev/null
sh -c '"$1/autoprof" -q --outside -o out2.data -- sh -c "echo \$PPID; readlink /proc/\$PPID/exe" >>exe.txt 2>/dev/null &
	echo $! >pid.txt; wait' sh "$B"
[ "$(sed -n 1p exe.txt)" = "$(cd "$B" && pwd -P)/autoprof" ]
ok $? "a plain run: the launcher is autoprof" || diag_file exe.txt
[ "$(sed -n 2p exe.txt)" = "$(cat pid.txt)" ] &&
	[ "$(sed -n 3p exe.txt)" = "$(cd "$B" && pwd -P)/autoprof-outside" ] && [ -s out2.data ]
ok $? "--outside: autoprof became autoprof-outside, same pid, the command its child, the file written" ||
	{ diag "launcher pid $(cat pid.txt)"; diag_file exe.txt; }
mkdir -p alone && cp "$B/autoprof" alone/
AUTOPROF_LIB="$B/libautoprof.so" ./alone/autoprof -q -o alone.data --outside -- true 2>alone.err
rc=$?
AUTOPROF_LIB="$B/libautoprof.so" ./alone/autoprof -q -o alone.data -- true 2>>alone.err
rc2=$?
[ "$rc" = 127 ] && [ "$rc2" = 0 ] && grep -q "cannot find autoprof-outside" alone.err &&
	[ "$(wc -l <alone.err)" = 1 ]
ok $? "autoprof without autoprof-outside: the outside mode is one line and 127, the library's mode runs" ||
	diag_file alone.err
# `autoprof ... & autoprof ctl $! OP` at once: $! is the shell's child before
# it execs the launcher (here held 0.2 s); ctl waits for it to become autoprof,
# then autoprof-outside, and answers.
for mode in --outside --per-process; do
	sh -c '(sleep 0.2; exec "$1/autoprof" $2 -q -o race.data -- sleep 0.5) & "$1/autoprof" ctl $! status
		wait' sh "$B" $mode >race.txt 2>&1
	grep -q '^pid [0-9]*: sampling on' race.txt
	ok $? "autoprof $mode -- CMD & autoprof ctl \$! status, before the child's exec: answered" ||
		diag_file race.txt
done
# The end of a run of one image reads the folder once and opens no file of
# the run (nothing to merge; before: the file was opened twice, its first
# record and its summary, and the folder read at the start too), and that
# one reading still removes the OUTPUT.merging-PID a killed launcher left.
dead=$(sh -c 'echo $$')
: >one.data.merging-$dead
: >one.data.merging-$$
strace -qq -e trace=openat,getdents64 -o one.strace "$B/autoprof" -q -o one.data -- true
[ ! -e one.data.merging-$dead ] && [ -e one.data.merging-$$ ] && [ -s one.data ]
ok $? "a run removes the merges a killed launcher left, not a live one's" || ls one.data*
is "$(grep -c 'one\.data"' one.strace) $(grep -c getdents64 one.strace)" "0 2" \
	"the launcher of a one-image run opens no file of the run and reads the folder once" ||
	diag_file one.strace
# A merged run does not wait for the disk: the merge is renamed over OUTPUT
# without an fsync (4.7 ms on ext4 before, on every run of two images or more).
strace -f -qq -e trace=fsync,fdatasync,rename -o sync.strace "$B/autoprof" -q -o sync.data -- \
	sh -c "$B/progs/split 50 >/dev/null; $B/progs/split 50 >/dev/null"
grep -q 'rename("sync.data.merging-[0-9]*", "sync.data")' sync.strace &&
	! grep -q 'fsync\|fdatasync' sync.strace
ok $? "a run's files are merged into its one file without an fsync" || diag_file sync.strace
# A process of the run that outlives the command without a file yet (a
# sleeper never samples, and a descendant's file is made at its first
# flush) is found by its control endpoint: the closing line still says it.
"$B/autoprof" -o live.data -- sh -c "(sleep 5 & echo \$! >live.pid); $B/progs/split 50 >/dev/null" \
	>/dev/null 2>live.err
# (In a slow VM the sleeper's fork may take a sample before its exec, or
# the sleeper one at its start: a file of its pid then stays, and nothing else.)
grep -q "^autoprof: 1 process of the run outlives the command" live.err &&
	[ -z "$(ls live.data.[0-9]* 2>/dev/null | grep -v "^live\.data\.$(cat live.pid)\(\.[0-9]*\)\?\$")" ]
ok $? "a process that outlives the command with no file yet is said" || diag_file live.err
[ -s live.pid ] && kill "$(cat live.pid)" 2>/dev/null

# The user's RLIMIT_FSIZE (ulimit -f) binds the launcher's own writes: they
# fail and say so (on a stderr that is not a file past the limit); the
# launcher never dies of SIGXFSZ (/bin/true under `ulimit -f 0` returned
# 153), nor does the program for a line of the library's on such a stderr,
# and the command still gets the signal's default (it kills itself with
# SIGXFSZ: 153 as without us).
mkdir -p fsz && rm -f fsz/*
# fsz LIMIT CMD...: CMD under `ulimit -f LIMIT`, its status
fsz() { _l=$1; shift; sh -c 'ulimit -f "$0"; exec "$@"' "$_l" "$@"; }
fsz 0 "$B/autoprof" -o fsz/a.data -- /bin/true >/dev/null 2>fsz.err
r1=$?
r2=$( (fsz 0 "$B/autoprof" --outside -o fsz/b.data -- "$B/progs/split" 50 2>&1 >/dev/null; echo "rc $?") |
	tee -a fsz.err | sed -n 's/^rc //p')
fsz 0 "$B/autoprof" -q -o fsz/c.data -- sh -c 'kill -XFSZ $$' >/dev/null 2>>fsz.err
r3=$?
[ "$r1 $r2 $r3" = "0 0 153" ]
ok $? "ulimit -f 0: the command's status (0, 0, 153 for its own SIGXFSZ), not the launcher's death ($r1 $r2 $r3)" ||
	diag_file fsz.err
grep -q "cannot create fsz/b.data: File too large" fsz.err && [ ! -e fsz/b.data ]
ok $? "... --outside says it cannot write its file and leaves no empty one" || { ls fsz | sed 's/^/# /'; diag_file fsz.err; }
"$B/autoprof" -q -o fsz/in.data -- "$B/progs/split" 100 >/dev/null 2>&1
fsz 1 "$B/autoprof" merge -o fsz/m.data fsz/in.data >/dev/null 2>fszm.err
rc=$?
[ $rc = 1 ] && grep -q "File too large" fszm.err && [ ! -e fsz/m.data ]
ok $? "autoprof merge under ulimit -f 1: one line says File too large, status 1, no file ($rc)" || diag_file fszm.err
done_testing
