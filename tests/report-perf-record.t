#!/bin/sh
# report-perf-record.t - autoprof-report on a real `perf record -g` file agrees
# with `perf report --stdio --no-children` (self shares within 2 points), and the
# ASan+UBSan build reads the same file, a truncated copy and garbage cleanly.
# (Needs build/autoprof-report, build/asan/autoprof-report and build/progs/split.)
. "$(dirname "$0")/lib.sh"

ASAN_REPORT=$B/asan/autoprof-report
SPLIT=$B/progs/split
TOLERANCE=2
needs "$REPORT" "$ASAN_REPORT" "$SPLIT"

tmp=$T
data=$tmp/split.data
if ! perf record -q -e cpu-clock -g -o "$data" "$SPLIT" 500 >"$tmp/record.out" 2>&1 ||
	[ ! -s "$data" ]; then
	echo "1..0 # SKIP perf record does not work here: $(tail -n 1 "$tmp/record.out")"
	exit 0
fi

plan 12

# Self share of a function in perf's and in our first (self) table; empty if absent.
perf_pct() {
	awk -v f="$1" '$3 == f { sub("%", "", $1); print $1; exit }' "$tmp/perf.txt"
}
our_pct() {
	awk -v f="$1" '$3 == f { sub("%", "", $1); print $1; exit }' "$tmp/ours.txt"
}
# True if both shares exist and differ by at most $TOLERANCE points.
close_to() {
	[ -n "$1" ] && [ -n "$2" ] &&
		awk -v a="$1" -v b="$2" -v t="$TOLERANCE" 'BEGIN { d = a - b; exit !(d <= t && -d <= t) }'
}

perf report -i "$data" --stdio --no-children --sort sym >"$tmp/perf.txt" 2>/dev/null
# --no-inline: perf's self table names the symbol's function (spin() is
# inlined into both; perf 6.1 here shows no inline frames).
"$REPORT" --no-inline "$data" >"$tmp/ours.txt" 2>"$tmp/ours.err"
ok $? "autoprof-report reads the perf record file"

for f in heavy_two_thirds light_one_third; do
	p=$(perf_pct $f)
	o=$(our_pct $f)
	close_to "$o" "$p"
	ok $? "$f: ours ${o:-missing}% vs perf report ${p:-missing}%"
done
h=$(our_pct heavy_two_thirds)
[ -n "$h" ] && awk -v h="$h" 'BEGIN { exit !(h > 55 && h < 78) }'
ok $? "heavy_two_thirds is about two thirds (${h:-missing}%)"

want=$(perf script -i "$data" -F tid 2>/dev/null | wc -l)
got=$(awk '$1 == "Samples:" { print $2 }' "$tmp/ours.txt")
[ "$got" = "$want" ]
ok $? "sample count matches perf script ($got vs $want)"

grep -q '^Event: *cpu-clock' "$tmp/ours.txt" && grep -q '^Command: .*perf record' "$tmp/ours.txt"
ok $? "header shows the event and the recorded command line"

# The duration is the samples' time range, which perf script shows too (a busy
# machine stretches the run's wall time, so no fixed value will do).
range=$(perf script -i "$data" -F time 2>/dev/null |
	awk '{ sub(/:$/, "", $1); if (NR == 1) f = $1; l = $1 } END { printf "%.3f", l - f }')
dur=$(sed -n 's/^Duration: *\([0-9.]*\) s.*/\1/p' "$tmp/ours.txt")
grep -q 'total time' "$tmp/ours.txt" &&
	awk -v d="$dur" -v r="$range" 'BEGIN { exit !(d != "" && d - r <= 0.002 && r - d <= 0.002) }'
ok $? "children table and the samples' duration are printed (${dur:-none} s; perf script: $range s)"

"$REPORT" --no-children --top 2 "$data" >"$tmp/short.txt" 2>/dev/null &&
	! grep -q 'total time' "$tmp/short.txt" &&
	[ "$(awk '/by self time/ { t = 1; next } t && /^ *[0-9.]+%/ { c++ } END { print c + 0 }' "$tmp/short.txt")" = 2 ]
ok $? "--no-children --top 2 prints one table of two rows"

# With inline frames (the default): the DWARF walk under the sanitizer too.
"$REPORT" "$data" >"$tmp/ours-inline.txt" 2>/dev/null
ASAN_OPTIONS=detect_leaks=1 "$ASAN_REPORT" "$data" >"$tmp/asan.txt" 2>"$tmp/asan.err"
st=$?
[ $st -eq 0 ] && cmp -s "$tmp/asan.txt" "$tmp/ours-inline.txt"
ok $? "the sanitizer build prints the same report (exit $st)"

size=$(wc -c <"$data")
head -c $((size / 3)) "$data" >"$tmp/trunc.data"
"$ASAN_REPORT" "$tmp/trunc.data" >/dev/null 2>"$tmp/trunc.err"
st=$?
[ $st -eq 0 ] && grep -q 'warning: .*data size in header' "$tmp/trunc.err"
ok $? "sanitizer build: truncated copy reports with a warning (exit $st)"

head -c 4096 /dev/urandom >"$tmp/garbage.data"
"$ASAN_REPORT" "$tmp/garbage.data" >/dev/null 2>"$tmp/garbage.err"
st=$?
[ $st -eq 1 ] && [ "$(wc -l <"$tmp/garbage.err")" -eq 1 ] &&
	grep -q "^autoprof-report: $tmp/garbage.data: " "$tmp/garbage.err"
ok $? "sanitizer build: garbage gives a one-line error and exit 1 (exit $st)"

"$REPORT" --top nope "$data" >/dev/null 2>&1
st=$?
[ $st -eq 2 ]
ok $? "a usage error exits 2 (exit $st)"
done_testing
