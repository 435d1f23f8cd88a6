#!/bin/sh
# report-onewalk.t - every single file, not only --call-graph dwarf ones, is
# read in one walk (report/driver/onewalk.c) with exactly the result of two
# passes: every view is byte-identical with AUTOPROF_REPORT_SPEC_GAP=0 (two
# passes) and with a checkpoint after every record (undone walks), on a
# `perf record -g` file and on autoprof's own file, whose threads' COMM
# records come late (the main thread's at the very end): a COMM that names a
# thread for the first time no longer undoes the walk, except under a
# --comm filter. The preload file's pages are mapped once: its page faults
# beyond a tiny file's are well under two passes' (a count, not a time).
#
# Run from the repository root after `make` (needs build/progs/mtwork and
# build/progs/threads).

. "$(dirname "$0")/lib.sh"

needs "$REPORT" "$LIB" "$B/progs/mtwork" "$B/progs/threads"
if ! timeout 120 perf record -q -F 2000 -g -o g.data "$B/progs/mtwork" 1 4 >record.out 2>&1 ||
	[ ! -s g.data ]; then
	echo "1..0 # SKIP perf record -g does not work here: $(tail -n 1 record.out)"
	exit 0
fi
# autoprof's own files: a threaded program, and a tiny one for the fault base
# (env after timeout: timeout itself must not be profiled into the same file)
timeout 120 env AUTOPROF_QUIET=1 AUTOPROF_FREQ=20000 AUTOPROF_OUTPUT=pre.data LD_PRELOAD="$LIB" \
	"$B/progs/mtwork" 1 4 >/dev/null
timeout 120 env AUTOPROF_QUIET=1 AUTOPROF_FREQ=997 AUTOPROF_OUTPUT=thr.data LD_PRELOAD="$LIB" \
	"$B/progs/threads" 300 >/dev/null
timeout 120 env AUTOPROF_QUIET=1 AUTOPROF_FREQ=50 AUTOPROF_OUTPUT=tiny.data LD_PRELOAD="$LIB" \
	"$B/progs/mtwork" 0.1 4 >/dev/null

plan 8

for f in g pre thr; do
	AUTOPROF_REPORT_SPEC_GAP=0 report_views $f.data $f.two
	report_views $f.data $f.one
	AUTOPROF_REPORT_SPEC_GAP=1 report_views $f.data $f.undo
	same_views $f.two $f.one "$f: one walk gives what two passes give"
	same_views $f.two $f.undo "$f: undone walks give what two passes give"
done
grep -q 'mix_word' pre.two && grep -q '^Samples:' g.two
ok $? "the reports have samples (mix_word)"

# faults FILE [GAP]: page faults of a default report of FILE
# (the fewest of 3 runs: the page cache's state moves single runs)
faults() {
	for _r in 1 2 3; do
		AUTOPROF_REPORT_SPEC_GAP=${2-1048576} perf stat -x, -e page-faults "$REPORT" "$1" \
			2>&1 >/dev/null | awk -F, '$3 ~ /page-faults/ { print $1 }'
	done | sort -n | head -1
}
base=$(faults tiny.data)
two=$(faults pre.data 0)
one=$(faults pre.data)
diag "page faults: tiny file $base, two passes $two, one walk $one ($(stat -c %s pre.data) bytes)"
awk -v b="$base" -v t="$two" -v o="$one" 'BEGIN { exit !(b > 0 && t - b > 100 && o < t) }'
ok $? "autoprof's own file is walked once (fewer page faults than two passes)"
done_testing
