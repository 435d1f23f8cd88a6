#!/bin/sh
# preload-cancel.t - asynchronous cancellation as without us: the sampling
# handler disables cancellation while it works (libunwind's pipe I/O is a
# cancellation point) and enables it again at its end; glibc 2.36's
# pthread_setcancelstate then acts on an asynchronous cancel that came
# meanwhile without setting the thread's result, so pthread_join gave NULL
# instead of PTHREAD_CANCELED (1 to 4 joins of 2000 at 10 kHz, in 3 of 3
# runs). tests/progs/asynccancel cancels threads deep in a recursion.
. "$(dirname "$0")/lib.sh"
needs "$B/progs/asynccancel" "$B/libautoprof.so"
plan 2

P=$B/progs/asynccancel

timeout -s KILL 60 "$P" 300 >plain.out 2>&1
is "$(cat plain.out)" "not canceled 0" "without the library every cancelled thread's result is PTHREAD_CANCELED"

bad=""
for i in 1 2 3; do
	timeout -s KILL 60 env LD_PRELOAD="$LIB" AUTOPROF_FREQ=10000 AUTOPROF_QUIET=1 \
		AUTOPROF_OUTPUT="c$i.data" "$P" 1000 >"c$i.out" 2>"c$i.err"
	rc=$?
	[ "$rc:$(cat "c$i.out")" = "0:not canceled 0" ] || bad="$bad run $i: status $rc, $(cat "c$i.out");"
done
is "$bad" "" "with the library at 10 kHz, 3 runs of 2000 cancelled threads: every result PTHREAD_CANCELED"
