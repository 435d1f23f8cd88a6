#!/bin/sh
# Process life: forks, execs, spawns, plugins, and every way of ending. The
# program's output, exit status and death by signal are the same with and
# without the library, every file written reads cleanly in perf report, and
# each holds the samples of the code that ran in that process image.
. "$(dirname "$0")/lib.sh"
plan 53

LIFE=$B/progs/life
PROGS=$B/progs

# same MODE: run life MODE plainly and profiled (in ./MODE/), compare.
same() {
	mkdir -p "$1"
	(cd "$1" && "$LIFE" "$1" "$PROGS" >plain.out 2>/dev/null; echo $? >plain.rc)
	(cd "$1" && AUTOPROF_QUIET=1 LD_PRELOAD=$LIB "$LIFE" "$1" "$PROGS" >prof.out 2>prof.err; echo $? >prof.rc)
	[ "$(cat "$1/plain.rc")" = "$(cat "$1/prof.rc")" ] && cmp -s "$1/plain.out" "$1/prof.out"
	ok $? "$1: same output and exit status ($(cat "$1/prof.rc")) as without the library"
}

# clean DIR: every profile perf.data* in DIR reads without a word on stderr
# (not the counters' perf.data*.stat, a perf stat record file).
clean() {
	bad=
	for f in "$1"/perf.data*; do
		case $f in *.stat) continue ;; esac
		perf report -i "$f" --stdio >/dev/null 2>rerr && clean_stderr rerr || bad="$bad $f"
	done
	is "$bad" "" "$1: every file reads cleanly in perf report ($(ls "$1" | grep -v '\.stat$' | grep -c '^perf.data'))"
}

# has FILE SYMBOL: FILE has samples in SYMBOL.
has() { perf report -i "$1" --stdio --no-children --sort sym 2>/dev/null | grep -q "\] $2\$"; }
# has_child DIR SYMBOL: a child's file in DIR (perf.data.PID[.N]) has SYMBOL: a fork's
# image may sample before its exec in a slow VM, and then has a file of its own too
has_child() {
	for _f in $(ls "$1" | grep '^perf.data\.[0-9][0-9.]*$'); do
		has "$1/$_f" "$2" && return 0
	done
	return 1
}

same fork
clean fork
child=$(ls fork | grep '^perf.data\.[0-9]*$')
has fork/perf.data parent_work && ! has fork/perf.data child_work && has "fork/$child" child_work
ok $? "fork: the child's samples are in its own file ($child), the parent's in perf.data"

same forkexec
has_child forkexec heavy_two_thirds
ok $? "forkexec: the exec'd program is profiled in the child's file"

same spawn
clean spawn
has_child spawn heavy_two_thirds
ok $? "spawn: posix_spawn with an environment of its own is still followed"

same system
has_child system heavy_two_thirds
ok $? "system: the command system() runs is profiled"

same execfail
has execfail/perf.data parent_work && has execfail/perf.data after_work
ok $? "execfail: profiling goes on in the same file after a failed exec"

same exec
clean exec
has exec/perf.data parent_work && has "exec/$(ls exec | grep '^perf.data\.[0-9]*\.1$')" heavy_two_thirds
ok $? "exec: the image before the exec and the program after it each have a file"

same dlopen
clean dlopen
has dlopen/perf.data hot_in_plugin
ok $? "dlopen: samples in a library unloaded by dlclose still resolve"

for m in sigint sigterm sigsegv abort _exit; do
	same $m
	clean $m
	has $m/perf.data parent_work
	ok $? "$m: the file holds the samples taken before the end"
done

same threadexit
has threadexit/perf.data child_work
ok $? "threadexit: exit() from another thread keeps that thread's samples"

same sigprof
is "$(cat sigprof/prof.out)" "sigprof: ticks" "sigprof: the program's own SIGPROF handler still runs"

same closeall
clean closeall
mkdir closeall2
(cd closeall2 && LD_PRELOAD=$LIB "$LIFE" closeall "$PROGS" >/dev/null 2>err.txt)
has closeall2/perf.data after_work && [ "$(grep -c 'profiler' closeall2/err.txt)" = 0 ]
ok $? "closeall: close_range(3, ~0) leaves profiling working, and says nothing (the program sees its own fds closed)" ||
	diag_file closeall2/err.txt

same takesig
mkdir takesig2
(cd takesig2 && LD_PRELOAD=$LIB "$LIFE" takesig "$PROGS" >/dev/null 2>err.txt)
has takesig2/perf.data after_work && grep -q 'handles signal [0-9]* itself; profiling moves to signal' takesig2/err.txt
ok $? "takesig: the program gets its own handler for our signal, and sampling goes on" ||
	diag_file takesig2/err.txt

same blockall
has blockall/perf.data child_work
ok $? "blockall: a thread that blocks every signal is sampled all the same"

same fds
is "$(cat fds/prof.out)" "fds 3..9 free" "fds: fds 3..9 are free in a profiled program"

# SIGKILL cannot be caught: what was flushed must read.
mkdir kill && cd kill
steal_mark
AUTOPROF_QUIET=1 LD_PRELOAD=$LIB "$LIFE" sleep "$PROGS" >out.txt &
pid=$!
i=0
while ! grep -q sleeping out.txt 2>/dev/null && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
kill -9 $pid
wait $pid
is "$?" 137 "kill -9 kills the profiled program as usual"
perf report -i perf.data --stdio >rep.txt 2>rep.err
clean_stderr rep.err
ok $? "kill -9: perf report reads the file up to the last flush" || diag_file rep.err
within "$(nsamples perf.data)" 1200 $((2000 + $(stolen_ms))) "kill -9: the samples of the 1.65 s of CPU before it are there"
cd ..

# A shell script starting a few hundred short processes leaves no litter.
mkdir many && cd many
AUTOPROF_QUIET=1 LD_PRELOAD=$LIB sh -c 'for i in $(seq 200); do /bin/true; done; echo ok' >out.txt
# A /bin/true that happens to take a sample (a busy machine stretches its CPU
# time past the first period) keeps its file; every file left must hold samples.
empty=0
for f in perf.data.*; do
	case $f in *.stat) continue ;; esac
	[ -e "$f" ] && [ "$(nsamples "$f")" -eq 0 ] && empty=$((empty + 1))
done
left=$(ls | grep -c '^perf.data')
is "$(cat out.txt):$empty" "ok:0" "200 short processes: the script runs, and no file without samples is left ($left files)"
cd ..

# AUTOPROF_FOLLOW=0: children are not profiled at all.
mkdir nofollow && cd nofollow
AUTOPROF_QUIET=1 AUTOPROF_FOLLOW=0 LD_PRELOAD=$LIB "$LIFE" forkexec "$PROGS" >/dev/null
is "$(ls | grep -v '\.stat$' | grep -c '^perf.data')" 1 "AUTOPROF_FOLLOW=0: only the first process writes a file"
# ... and the children's LD_PRELOAD keeps every other entry, however long the list
# (it was cut at 4 KiB: a 300-entry list lost most of its entries, silently).
other=/lib/x86_64-linux-gnu/libm.so.6
[ -e $other ] || other=$(ldd /bin/sh | awk '/libc.so/ {print $3}')
list=$other
for i in $(seq 299); do list="$list:$other"; done
AUTOPROF_QUIET=1 AUTOPROF_FOLLOW=0 LD_PRELOAD="$LIB:$list" sh -c 'printf "%s" "$LD_PRELOAD"' >seen.txt 2>seen.err
is "$(cat seen.txt)" "$list" "AUTOPROF_FOLLOW=0: the library leaves the children's LD_PRELOAD, all ${#list} bytes of its other entries ($(wc -c <seen.txt) seen)"
cd ..

# autoprof-report merges a process tree's files.
"$REPORT" fork/perf.data fork/perf.data.* >merged.txt 2>merged.err
grep -q parent_work merged.txt && grep -q child_work merged.txt && grep -q 'Processes: *2' merged.txt
ok $? "autoprof-report merges the parent's and the child's file" || diag_file merged.txt
done_testing
