#!/bin/sh
# memory-fork.t - a memory profile across fork and exec where its tables may
# be held (session 13): a fork or an exec in a signal handler that
# interrupted the live table (the handler waited for a lock the code it
# interrupted held: the process hung); a child forked while another thread
# wrote a live set (a window's end: the child hung at its exit on the
# snapshot's lock); children that sampled in step with their siblings (the
# parent's random state). tests/progs/memfork drives each; every run is
# bounded, and a hang is a failure.
. "$(dirname "$0")/lib.sh"
needs "$B/progs/memfork" "$B/libautoprof-memory.so" "$B/autoprof"
plan 11
. "$ROOT/tests/memlib.sh" # MEMPRELOAD, at

P=$B/progs/memfork
# A hang is a run that never ends: 120 s (the slowest run takes 9 s alone in a slow VM,
# several times that beside the rest of the suite; 15 s killed it there).
HANG_S=120
A=$B/autoprof

# events FILE: the distinct event names of FILE's samples.
events() { perf script -i "$1" -F event 2>/dev/null | sed 's/:.*//; s/^ *//' | sort -u | tr '\n' ' '; }

# ---- fork in a SIGALRM handler (every 2 ms) while every allocation is sampled ----
timeout -s KILL $HANG_S "$A" -q --memory --memory-interval 1 -o sigfork.data -- "$P" sigfork 300 \
	>sigfork.out 2>sigfork.err
rc=$?
is "$rc $(cat sigfork.out)" "0 done 300" \
	"300 forks in a signal handler that interrupts the wrappers: no hang, the program's output and status" ||
	diag_file sigfork.err
case "$(events sigfork.data)" in
*alloc-bytes*live-bytes*) ok 0 "...and its file has alloc-bytes and live-bytes for perf script" ;;
*) ok 1 "...and its file has alloc-bytes and live-bytes for perf script ($(events sigfork.data))" ;;
esac
[ "$(at sigfork.data alloc-bytes churn)" -gt 0 ]
ok $? "...the samples at the allocating function (perf report)"

# ---- the same without the launcher: the children exit in the handler ----
timeout -s KILL $HANG_S env AUTOPROF_MEMORY=1 AUTOPROF_MEMORY_INTERVAL=1 AUTOPROF_OUTPUT=bare.data \
	LD_PRELOAD="$MEMPRELOAD" "$P" sigfork 200 >bare.out 2>bare.err
rc=$?
is "$rc $(cat bare.out)" "0 done 200" "LD_PRELOAD of both libraries: the same" || diag_file bare.err
# (a loaded machine slows the children's exits: one may take a sample, keep a file, and
# say that its live set is not in it)
said=$(grep -c 'live set is not in the file' bare.err)
kept=$(ls bare.data.* 2>/dev/null | grep -cv '\.stat$')
[ "$said" -le "$kept" ]
ok $? "...children that took no sample say nothing of a live set (they leave no file; $said said it, $kept files kept)" ||
	{ diag_file bare.err; ls bare.data* | sed 's/^/#   /' >&2; }

# ---- exec in the handler ----
timeout -s KILL $HANG_S "$A" -q --memory --memory-interval 1 -o sigexec.data -- "$P" sigexec 20 \
	>sigexec.out 2>sigexec.err
rc=$?
is "$rc $(cat sigexec.out)" "0 done 20" \
	"20 children exec /bin/true in a signal handler that interrupts the wrappers: no hang, each exits 0" ||
	diag_file sigexec.err

# ---- a thread forks while windows end (each writes the live set of 20000 blocks) ----
timeout -s KILL $HANG_S "$A" -q --memory --memory-interval 64 --window 100ms -o win.data -- \
	"$P" threadfork 200 >win.out 2>win.err
rc=$?
is "$rc $(cat win.out)" "0 done 200" \
	"200 forks from a thread while windows' ends write the live set: no child hangs at its exit" ||
	diag_file win.err
timeout -s KILL $HANG_S "$A" -q --memory --memory-interval 64 -o tf.data -- "$P" threadfork 100 \
	>tf.out 2>tf.err
rc=$?
is "$rc $(cat tf.out)" "0 done 100" "...and without windows (the live table's locks alone)" ||
	diag_file tf.err
[ "$(at tf.data live-bytes threadfork)" -gt 0 ]
ok $? "...the parent's live set written at its end" || diag_file tf.err

# ---- preforked children sample apart: each draws its own intervals ----
timeout -s KILL $HANG_S env AUTOPROF_MEMORY=1 AUTOPROF_MEMORY_INTERVAL=4096 AUTOPROF_OUTPUT=rng.data \
	LD_PRELOAD="$MEMPRELOAD" "$P" rng 4 >rng.out 2>rng.err
for f in rng.data.*; do
	case $f in *.stat) continue ;; esac
	perf report -i "$f" -D 2>/dev/null |
		awk '/PERF_RECORD_SAMPLE/ && / addr: / && !/ period: 0 / { printf "%s ", $NF } END { print "" }'
done >rng.addrs
is "$(grep -c . rng.addrs) $(sort -u rng.addrs | grep -c .)" "4 4" \
	"4 children forked from one thread, the same allocations: 4 different sets of sampled blocks" ||
	diag_file rng.addrs
[ "$(wc -w <rng.addrs)" -ge 8 ]
ok $? "...each with samples" || diag_file rng.addrs

done_testing
