#!/bin/bash
# preload-signals.t - the program's view of every signal is its own: what
# programs observe about their signals (dispositions, masks, waits, deaths
# and core flags, vfork children, Python, Go) is the same plain and profiled.
. "$(dirname "$0")/lib.sh"
# The launcher's private core folders go to this test's own TMPDIR: those of
# tests running beside it (prove -j) are not this test's to count.
mkdir -p "$T/tmp"
export TMPDIR="$T/tmp"

P=$B/progs
RUN=$P/sigrun
export AUTOPROF_QUIET=1 AUTOPROF_FREQ=2000
TO="timeout 60"

plan 35

# same NAME ARGS...: stdout and end (via sigrun) plain and profiled are equal;
# the profiled run writes $T/NAME.data, checked by readable.
same() {
	_name=$1
	shift
	$TO "$RUN" -- "$@" >"$_name.plain" 2>/dev/null
	AUTOPROF_OUTPUT=$T/$_name.data $TO "$RUN" -p "$LIB" -- "$@" >"$_name.prof" 2>"$_name.err"
	if cmp -s "$_name.plain" "$_name.prof" && [ -s "$_name.plain" ]; then
		ok 0 "$_name: the program sees the same plain and profiled"
	else
		ok 1 "$_name: the program sees the same plain and profiled"
		diff "$_name.plain" "$_name.prof" | head -20 | sed 's/^/#   /' >&2
		diag_file "$_name.err"
	fi
}

# readable FILE "desc": perf report reads it with an empty stderr and finds samples.
readable() {
	perf report -i "$1" --stdio >"$1.rep" 2>"$1.rerr"
	if clean_stderr "$1.rerr" && grep -q '^# Samples: [1-9]' "$1.rep"; then
		ok 0 "$2"
	else
		ok 1 "$2"
		diag_file "$1.rerr"
	fi
}

# 1-5: dispositions, masks, waits, a handler on every real-time signal, SIG_IGN.
same disp "$P/sigview" disp
same mask "$P/sigview" mask
same wait "$P/sigview" wait
same chain "$P/sigview" chain
same ign "$P/sigview" ign

# 6-7: the profile of the program that handles every real-time signal;
# the same program with CPU-time timers as the sample source.
readable chain.data "chain: the profile reads with samples"
AUTOPROF_MODE=timer same chain-timer "$P/sigview" chain

# 8: death by every signal whose default action ends the program, core flag included.
bad=""
for s in 1 2 3 4 5 6 7 8 10 11 12 13 14 15 16 24 25 26 27 29 30 31 34 39 50 64; do
	a=$($TO "$RUN" -c -- "$P/sigview" kill $s 2>/dev/null)
	rm -f core core.*
	b=$(AUTOPROF_OUTPUT=$T/kill$s.data $TO "$RUN" -c -p "$LIB" -- "$P/sigview" kill $s 2>/dev/null)
	rm -f core core.*
	[ "$a" = "$b" ] && [ "${a% core *}" = "signal $s" ] || bad="$bad $s($a|$b)"
done
is "$bad" "" "a program killing itself dies of the same signal with the same core flag"

# 9-10: and each of those deaths leaves a finished file (samples, command line).
bad=""
for s in 2 10 13 14 15 39 64; do
	perf report -i kill$s.data --stdio >rep 2>rerr
	perf report -i kill$s.data --header-only 2>/dev/null | grep -q '^# cmdline : .*sigview kill' &&
		clean_stderr rerr && grep -q '^# Samples: [1-9]' rep || bad="$bad $s"
done
is "$bad" "" "deaths by signal leave a file with samples and its features"
readable kill11.data "death by SIGSEGV: the profile reads"

# 11-12: SIGRTMIN+5 and SIGUSR1 sent from outside end the program as they would plain.
same ext39 "$RUN" -k 39 -d 300 -- "$P/sigview" spin 3000
same ext10 "$RUN" -k 10 -d 300 -- "$P/sigview" spin 3000

# 13-14: SIGUSR1 to a process whose 4 threads are busy loses no sample to the death.
AUTOPROF_OUTPUT=$T/usr1.data $TO "$RUN" -p "$LIB" -- "$P/sigview" threads 10 1000 >usr1.out 2>usr1.err
AUTOPROF_OUTPUT=$T/exit.data $TO "$RUN" -p "$LIB" -- "$P/sigview" threads 0 1000 >exit.out 2>exit.err
is "$(tail -1 usr1.out)" "signal 10 core 0" "threads: died of SIGUSR1"
n_usr1=$(nsamples usr1.data)
n_exit=$(nsamples exit.data)
c_usr1=$(awk '/cpu_ms/ { print $2 }' usr1.out)
c_exit=$(awk '/cpu_ms/ { print $2 }' exit.out)
# Samples per CPU ms, relative to the same program ending normally: the
# flush of running threads' buffers at the death must not lose any.
within "$(awk -v a="$n_usr1" -v b="$n_exit" -v ca="$c_usr1" -v cb="$c_exit" \
	'BEGIN { if (!b || !ca || !cb) print 0; else printf "%.2f", (a / ca) / (b / cb) }')" \
	0.9 1.2 "threads killed by SIGUSR1: samples per CPU ms, relative to a normal exit"

# 15: children that share our memory (vfork, posix_spawn) leave the parent alone.
same vfork "$P/sigvfork"

# 16-17: Python's subprocess (a vfork child that resets every handler).
out=$(LD_PRELOAD=$LIB AUTOPROF_OUTPUT=$T/py.data $TO python3 -c \
	'import subprocess; subprocess.run(["true"]); print("ok")' 2>py.err)
is "$?:$out" "0:ok" "python subprocess.run: the parent lives on"
out=$(LD_PRELOAD=$LIB AUTOPROF_OUTPUT=$T/py2.data $TO python3 -c '
import subprocess, os
for i in range(20):
    subprocess.run(["true"])
    sum(range(100000))
print("ok")' 2>py2.err)
is "$?:$out" "0:ok" "python: 20 subprocesses while sampling"

# 18-20: Python's Ctrl-C is a KeyboardInterrupt, whoever sends it.
cat >ki.py <<'EOF'
import os, signal, sys, time
print(signal.getsignal(signal.SIGINT) is signal.default_int_handler, flush=True)
if sys.argv[1] == "self":
    os.kill(os.getpid(), signal.SIGINT)
open(sys.argv[2], "w").close()
time.sleep(30)
EOF
$TO "$RUN" -- env --default-signal=INT python3 ki.py self ready.a >ki.plain 2>ki.plain.err
AUTOPROF_OUTPUT=$T/ki.data $TO "$RUN" -p "$LIB" -- env --default-signal=INT python3 ki.py self ready.b \
	>ki.prof 2>ki.prof.err
is "$(cat ki.prof) $(tail -1 ki.prof.err)" "$(cat ki.plain) $(tail -1 ki.plain.err)" \
	"python: SIGINT from itself is a KeyboardInterrupt, same end"
# From outside, once the program says it is ready (a file), as a Ctrl-C would.
ext_int() {
	rm -f "$2"
	(
		[ -n "$1" ] && export LD_PRELOAD=$1 AUTOPROF_OUTPUT=$T/kiext.data
		exec env --default-signal=INT python3 ki.py ext "$2"
	) >kiext.out 2>kiext.err &
	_pid=$!
	for _i in $(seq 300); do [ -e "$2" ] && break; sleep 0.1; done
	kill -INT $_pid
	wait $_pid
	echo "$? $(cat kiext.out) $(tail -1 kiext.err)"
}
plain=$(ext_int "" ready.c)
prof=$(ext_int "$LIB" ready.d)
is "$prof" "$plain" "python: SIGINT from outside is a KeyboardInterrupt, same end"
is "${plain#* }" "True KeyboardInterrupt" "python: the plain run raises KeyboardInterrupt (the check is meaningful)"

# 21-22: AUTOPROF_STAT: a death prints nothing from inside the handler.
AUTOPROF_STAT=1 AUTOPROF_OUTPUT=$T/stat.data $TO "$RUN" -p "$LIB" -- "$P/sigview" kill 15 >stat.out 2>stat.err
is "$(cat stat.out)" "signal 15 core 0" "AUTOPROF_STAT: death by SIGTERM as plain"
! grep -q 'Performance counter stats' stat.err
ok $? "AUTOPROF_STAT: no table printed from the signal handler"

# 23-26: the launcher ends as the command did, core flag included, without a core of its own.
mkdir -p lc && cd lc || exit 1
a=$($TO "$RUN" -c -- "$P/sigview" kill 11 2>/dev/null)
rm -f core core.*
b=$($TO "$RUN" -c -- "$B/autoprof" -q -o "$T/lc.data" -- "$P/sigview" kill 11 2>/dev/null)
is "$b" "$a" "launcher: death by SIGSEGV with the command's core flag"
cores=$(ls | grep -c '^core')
if [ "$(ulimit -Hc)" != 0 ] && [ "$(cut -c1 /proc/sys/kernel/core_pattern)" != "|" ] &&
	! grep -q / /proc/sys/kernel/core_pattern; then
	is "$cores" 1 "launcher: one core file, the command's"
	grep -aq 'sigview kill 11' core* && ! grep -aq 'autoprof -q' core*
	ok $? "launcher: the core is the command's, not the launcher's"
else
	skip "core_pattern does not write cores in the working directory"
	skip "core_pattern does not write cores in the working directory"
fi
rm -f core core.*
a=$($TO "$RUN" -- "$P/sigview" kill 3 2>/dev/null)
b=$($TO "$RUN" -- "$B/autoprof" -q -o "$T/lc3.data" -- "$P/sigview" kill 3 2>/dev/null)
is "$b" "$a" "launcher: SIGQUIT without core limit, same end"
cd "$T" || exit 1
# 27: the launcher's private core directory is gone once its cleaner ran.
left=1
for _i in $(seq 100); do
	ls -d "$T"/tmp/autoprof-core.* >/dev/null 2>&1 ||
		{ left=0; break; }
	sleep 0.1
done
ok $left "launcher: no core directory left behind"

# 28-29: masks and waits with CPU-time timers as the sample source.
AUTOPROF_MODE=timer same mask-timer "$P/sigview" mask
AUTOPROF_MODE=timer same wait-timer "$P/sigview" wait

# 30-31: an exec with every signal blocked: the next image's mask, profiled or not.
same exec "$P/sigview" exec
AUTOPROF_FOLLOW=0 same exec-nofollow "$P/sigview" exec

# 32-34: Go with cgo (goroutines on small stacks; every signal handled by Go's runtime).
if command -v go >/dev/null 2>&1; then
	mkdir -p go && cat >go/main.go <<'EOF'
package main

/*
int cwork(int n) { int s = 0; for (int i = 0; i < n; i++) s += i * 7; return s; }
*/
import "C"

import (
	"fmt"
	"sync"
	"time"
)

func main() {
	var wg sync.WaitGroup
	end := time.Now().Add(3 * time.Second)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var s int64
			for time.Now().Before(end) {
				s += int64(C.cwork(10000))
				s += int64(len(make([]byte, 1024)))
			}
		}()
	}
	wg.Wait()
	fmt.Println("done")
}
EOF
	printf 'module sigtest\ngo 1.19\n' >go/go.mod
	(cd go && GOCACHE=$B/gocache GOPATH=$T/gopath GOFLAGS=-mod=mod CGO_ENABLED=1 \
		$TO go build -o ../gocgo .) >go.err 2>&1
	if [ -x gocgo ]; then
		out=$(AUTOPROF_FREQ=1000 AUTOPROF_OUTPUT=$T/go.data LD_PRELOAD=$LIB $TO ./gocgo 2>gorun.err)
		is "$?:$out" "0:done" "go (cgo), goroutines busy 3 s at 1000 Hz: runs to the end"
		! grep -v '^autoprof: ' gorun.err | grep -q .
		ok $? "go: nothing on stderr but our lines"
		readable "$(ls go.data.[0-9]* | head -1)" "go: the profile reads with samples"
	else
		diag_file go.err
		skip "go build failed"
		skip "go build failed"
		skip "go build failed"
	fi
else
	skip "no go"
	skip "no go"
	skip "no go"
fi

# Signals ignored before exec (nohup, sh background jobs, daemons): the kernel
# keeps them at SIG_IGN with flags 0 and no restorer; read back raw, they are
# exactly so preloaded (an exchange put back through glibc's sigaction added
# SA_RESTORER and its restorer: nohup'd make check failed hostile.t).
TRAP="trap '' HUP INT PIPE TERM; exec $P/sigview kernel"
$TO sh -c "$TRAP" | grep ' IGN ' >kign.plain
AUTOPROF_OUTPUT=$T/kign.data LD_PRELOAD=$LIB $TO sh -c "$TRAP" 2>kign.err | grep ' IGN ' >kign.prof
if [ "$(wc -l <kign.plain)" -ge 4 ] && cmp -s kign.plain kign.prof; then
	ok 0 "inherited SIG_IGN: handler, flags, restorer and mask read back raw as plain"
else
	ok 1 "inherited SIG_IGN: handler, flags, restorer and mask read back raw as plain"
	diff kign.plain kign.prof | head -10 | sed 's/^/#   /' >&2
	diag_file kign.err
fi

done_testing
