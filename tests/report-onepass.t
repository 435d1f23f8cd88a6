#!/bin/sh
# report-onepass.t - `--call-graph dwarf` files are read in one walk
# (report/driver/onewalk.c) with exactly the result of two passes: every view is
# byte-identical with the two-pass reading (AUTOPROF_REPORT_SPEC_GAP=0), on a
# file whose side-band records all come early (mtwork: the one walk holds) and
# on one with late COMM/EXIT records (threads), also with checkpoints after
# every record (gap 1: the walk is undone and retried, then two passes). The
# one walk maps the file's pages once: its page faults beyond those of a tiny
# file are well under the two passes' (a count, not a time).
#
# Run from the repository root after `make` (needs build/progs/mtwork and
# build/progs/threads).

. "$(dirname "$0")/lib.sh"

needs "$REPORT" "$B/progs/mtwork" "$B/progs/threads"
if ! perf record -q -F 4000 --call-graph dwarf -o mtwork.data "$B/progs/mtwork" 1 4 \
	>record.out 2>&1 || [ ! -s mtwork.data ] ||
	! perf record -q -F 997 --call-graph dwarf -o threads.data "$B/progs/threads" 300 \
		>>record.out 2>&1 || [ ! -s threads.data ] ||
	! perf record -q -F 50 --call-graph dwarf -o tiny.data "$B/progs/mtwork" 0.1 4 \
		>>record.out 2>&1 || [ ! -s tiny.data ]; then
	echo "1..0 # SKIP perf record --call-graph dwarf does not work here: $(tail -n 1 record.out)"
	exit 0
fi

plan 8

for f in mtwork threads; do
	AUTOPROF_REPORT_SPEC_GAP=0 report_views $f.data $f.two
	report_views $f.data $f.one
	AUTOPROF_REPORT_SPEC_GAP=1 report_views $f.data $f.undo
	same_views $f.two $f.one "$f: one walk gives what two passes give"
	same_views $f.two $f.undo "$f: undone walks give what two passes give"
done
grep -q '^Samples:' mtwork.two
ok $? "the report has samples"
grep -q 'mix_word' mtwork.two
ok $? "the stacks are unwound (mix_word)"

# faults FILE [GAP]: page faults of a default report of FILE
faults() {
	AUTOPROF_REPORT_SPEC_GAP=${2-1048576} perf stat -x, -e page-faults "$REPORT" "$1" \
		2>&1 >/dev/null | awk -F, '$3 ~ /page-faults/ { print $1 }'
}
# (medians of 3 interleaved runs each: one run's count moves with the page cache's state)
med() { printf '%s\n' "$@" | sort -n | sed -n 2p; }
set --
for i in 1 2 3; do set -- "$@" "$(faults tiny.data) $(faults mtwork.data 0) $(faults mtwork.data)"; done
base=$(med $(printf '%s\n' "$@" | awk '{ print $1 }'))
two=$(med $(printf '%s\n' "$@" | awk '{ print $2 }'))
one=$(med $(printf '%s\n' "$@" | awk '{ print $3 }'))
diag "page faults (medians of 3): tiny file $base, two passes $two, one walk $one"
awk -v b="$base" -v t="$two" -v o="$one" 'BEGIN { exit !(b > 0 && t - b > 100 && o - b < 0.75 * (t - b)) }'
ok $? "one walk maps the pages once (faults beyond a tiny file's under 3/4 of two passes')"
s=$(stat -c %s mtwork.data)
within "$s" 20000000 1000000000 "the mtwork file is big enough to tell ($s bytes)"
done_testing
