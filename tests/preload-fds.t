#!/bin/sh
# Descriptors and cancellation: the program's view of its fds is its own
# (dup2/dup3/F_DUPFD onto the profiler's numbers, raw closes, RLIMIT_NOFILE
# with many threads), and deferred cancellation of sampled threads neither
# hangs nor loses their samples. Every run is under a timeout that counts as
# a failure.
. "$(dirname "$0")/lib.sh"
plan 24

P=$B/progs

# run DIR PROG ARGS...: PROG plainly and profiled in DIR/, output and status
# in DIR/{plain,prof}.{out,rc}; the profiled run's stderr in DIR/prof.err.
run() {
	_d=$1
	shift
	mkdir -p "$_d"
	(cd "$_d" && timeout -s KILL 60 "$@" >plain.out 2>/dev/null; echo $? >plain.rc)
	# (PREFIX's env runs before the library is preloaded: at 10 kHz in a slow VM it took a
	# sample of its own, and the program's file was no longer perf.data)
	(cd "$_d" && timeout -s KILL 60 $PREFIX env AUTOPROF_QUIET=1 LD_PRELOAD="$LIB" "$@" \
		>prof.out 2>prof.err; echo $? >prof.rc)
}

# same DIR "description": identical output and exit status.
same() {
	[ "$(cat "$1/plain.rc")" = "$(cat "$1/prof.rc")" ] && cmp -s "$1/plain.out" "$1/prof.out"
	ok $? "$2 (status $(cat "$1/prof.rc"))" || { diag "plain:"; diag_file "$1/plain.out"; diag "profiled:"; diag_file "$1/prof.out"; }
}

# reads DIR: DIR/perf.data reads in perf report with nothing on stderr.
reads() {
	perf report -i "$1/perf.data" --stdio >"$1/rep.txt" 2>"$1/rep.err" && clean_stderr "$1/rep.err"
}

# has FILE SYMBOL: FILE has samples in SYMBOL.
has() { perf report -i "$1" --stdio --no-children --sort sym 2>/dev/null | grep -q "\] $2\$"; }
# burns DIR [PATTERN]: one profile in DIR (perf.data*, or those PATTERN names) reads in perf
# report and has the burner threads' samples: a fork or a program that execs (prlimit) may
# take a sample before its exec in a slow VM, and then has a file of its own too.
burns() {
	for _f in $(ls "$1" | grep "${2:-^perf\.data}" | grep -v '\.stat$\|\.old$'); do
		perf report -i "$1/$_f" --stdio >/dev/null 2>&1 && has "$1/$_f" burn &&
			perf report -i "$1/$_f" --stdio --no-children 2>/dev/null | grep -q burner && return 0
	done
	return 1
}

# 50 threads cancelled (deferred) five times over, at 10 kHz, three times.
fails=0
for i in 1 2 3; do
	PREFIX="env AUTOPROF_FREQ=10000" run cancel$i "$P/fdcancel" 50 5
	[ "$(cat cancel$i/prof.rc)" = 0 ] && cmp -s cancel$i/plain.out cancel$i/prof.out || fails=$((fails + 1))
done
is "$fails" 0 "pthread_cancel of 50 sampled threads at 10 kHz, 3 runs of 5 rounds: no hang, same output"
reads cancel1 && has cancel1/perf.data spin_until_cancelled
ok $? "cancelled threads' samples are flushed at their exit, and the file reads cleanly" ||
	diag_file cancel1/rep.err
PREFIX="env AUTOPROF_FREQ=10000 AUTOPROF_MODE=timer" run cancel_timer "$P/fdcancel" 50 5
same cancel_timer "the same with the CPU-time timer source"

run dup2 "$P/fddup" dup2
same dup2 "dup2/dup3/F_DUPFD onto 1000..1010: the program gets the numbers it asks for, and its file holds only its bytes"
is "$(tail -1 dup2/prof.out)" "own.txt holds 12 bytes" "no profile record reaches the program's file"
reads dup2
ok $? "the profile still reads cleanly after its fd moved" || diag_file dup2/rep.err
has dup2/perf.data burn
ok $? "and holds the samples taken after the move"

run pipe "$P/fddup" pipe
same pipe "a pipe dup2'd onto 1000..1010 and closed sees end of file"

run rawclose "$P/fddup" rawclose
same rawclose "raw close of 1000..1023 and the numbers reused: the program's file holds only its bytes"
reads rawclose && has rawclose/perf.data burn
ok $? "the profile is reopened by path and keeps the samples after the raw close" ||
	diag_file rawclose/rep.err

# files_opened DIR: how many files the profiled run opened.
opened() { sed -n 's/^opened \([0-9]*\) .*/\1/p' "$1/prof.out"; }
run rlimit "$P/fddup" rlimit 64
run rlimit0 "$P/fddup" rlimit 0
plain=$(sed -n 's/^opened \([0-9]*\) .*/\1/p' rlimit/plain.out)
diag "RLIMIT_NOFILE 1024: $plain files plain with 64 threads; profiled: $(opened rlimit) with 64 threads, $(opened rlimit0) with none"
is "$(cat rlimit/prof.rc)$(cat rlimit0/prof.rc)" 00 "RLIMIT_NOFILE 1024: runs with 64 threads and without"
is "$(opened rlimit)" "$(opened rlimit0)" "64 sampled threads cost no file descriptor"
within "$(opened rlimit)" $((plain - 7)) "$plain" "the profiler's constant cost: at most 7 fds (4 counters, output file, libunwind's pipe)"
PREFIX="env AUTOPROF_MODE=timer" run rlimit_timer "$P/fddup" rlimit 64
is "$(opened rlimit_timer)" "$(opened rlimit0)" "the same with the CPU-time timer source"

# Issue 21: under a hard RLIMIT_NOFILE 16/16 no number is left above the
# program's: the library keeps no fd there (its file is written by a helper,
# counters and libunwind's pipe go), and the program opens as many files as
# without us: the limit set before the fork, in the child after it, before
# the child execs, and from the start (prlimit). The samples its threads take
# while it holds every number are in the file.
for spec in "before:before the fork" "after:in the child after the fork" \
	"exec:before the child execs"; do
	w=${spec%%:*}
	when=${spec#*:}
	run tight_$w "$P/fddup" tight $w
	same tight_$w "RLIMIT_NOFILE 16/16 set $when: parent and child open as many files as without us"
	reads tight_$w && burns tight_$w '^perf\.data\.'
	ok $? "the child's profile reads cleanly and holds its threads' samples taken with every fd in use" ||
		diag_file tight_$w/prof.err
done
run tight_start prlimit --nofile=16:16 "$P/fddup" tight count
same tight_start "a program started under RLIMIT_NOFILE 16/16 opens as many files as without us"
reads tight_start && burns tight_start
ok $? "and its profile reads cleanly with the samples taken with every fd in use" ||
	diag_file tight_start/prof.err

# A shell closes one of our numbers and takes another: both as without the library.
mkdir shell && cd shell
timeout -s KILL 60 env AUTOPROF_QUIET=1 LD_PRELOAD="$LIB" bash -c 'exec 1000>&-; exec 1001>x.txt; echo hi >&1001; exec 1001>&-; cat x.txt' >out.txt 2>err.txt
is "$(cat out.txt)" "hi" "bash closes 1000 and takes 1001, both the profiler's, and its file holds only its line"
cd ..

# Thread exit by cancellation at 10 kHz with fp stacks too (the fast path).
PREFIX="env AUTOPROF_FREQ=10000 AUTOPROF_CALLGRAPH=fp" run cancel_fp "$P/fdcancel" 50 5
same cancel_fp "pthread_cancel with fp stacks"
done_testing
