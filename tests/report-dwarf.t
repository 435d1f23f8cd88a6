#!/bin/sh
# report-dwarf.t - autoprof-report on `perf record --call-graph dwarf` files:
# the user stacks are unwound from the dumped registers and stack (libdw), so
# self and children shares of the top 10 agree with `perf report --children`
# within 1 point, the trees and folded stacks reach main, and the ASan+UBSan
# build reads the file and a truncated copy cleanly.
#
# (Needs build/autoprof-report, build/asan/autoprof-report, build/progs/split
# and build/progs/truth, which the Makefile builds -O2 -fomit-frame-pointer:
# only dwarf can unwind them.)
. "$(dirname "$0")/lib.sh"

ASAN_REPORT=$B/asan/autoprof-report
TOLERANCE=1
needs "$REPORT" "$ASAN_REPORT" "$B/progs/split" "$B/progs/truth"

tmp=$T
if ! perf record -q -F 499 --call-graph dwarf -o "$tmp/split.data" "$B/progs/split" 600 \
	>"$tmp/record.out" 2>&1 || [ ! -s "$tmp/split.data" ] ||
	! perf record -q -F 499 --call-graph dwarf -o "$tmp/truth.data" "$B/progs/truth" all 0.4 \
		>>"$tmp/record.out" 2>&1 || [ ! -s "$tmp/truth.data" ]; then
	echo "1..0 # SKIP perf record --call-graph dwarf does not work here: $(tail -n 1 "$tmp/record.out")"
	exit 0
fi

plan 14

# compare NAME COLUMN: perf's top 10 rows by COLUMN (1: children, 2: self) of
# $tmp/NAME.perf against our table of the same kind; prints the rows that are
# missing or off by more than $TOLERANCE points, nothing when all agree.
# Both run with --no-inline: the function a pc is in, not the calls inlined
# there (spin() is inlined into both; tests/report-inline.t covers inline frames).
compare() {
	if [ "$2" = 1 ]; then title='^Top functions by total'; else title='^Top functions by self'; fi
	awk -v col="$2" -v t="$TOLERANCE" -v title="$title" '
		FNR == 1 { f++ }
		f == 1 && $1 ~ /%$/ && $3 ~ /^\[/ && rows < 10 {
			v = $col; sub("%", "", v); name = $4
			if (!(name in want)) { want[name] = v; order[++rows] = name }
		}
		f == 2 && $0 ~ title { on = 1; next }
		f == 2 && on && NF == 0 { on = 0 }
		f == 2 && on && $1 ~ /%$/ { v = $1; sub("%", "", v); if (!($3 in got)) got[$3] = v }
		END {
			if (rows < 3) print "perf listed only " rows " rows"
			for (i = 1; i <= rows; i++) {
				nm = order[i]
				if (!(nm in got)) {
					if (want[nm] > t) print nm ": perf " want[nm] "%, ours missing"
					continue
				}
				d = got[nm] - want[nm]
				if (d > t || -d > t) print nm ": perf " want[nm] "%, ours " got[nm] "%"
			}
		}' "$tmp/$1.perf" "$tmp/$1.ours"
}

for prog in split truth; do
	data=$tmp/$prog.data
	perf report -i "$data" --stdio --children --no-inline --sort sym -g none \
		>"$tmp/$prog.perf" 2>/dev/null
	"$REPORT" --no-inline --top 40 "$data" >"$tmp/$prog.ours" 2>"$tmp/$prog.err"
	ok $? "$prog: autoprof-report reads the dwarf file"
	bad=$(compare $prog 2)
	[ -z "$bad" ]
	ok $? "$prog: self shares of perf's top 10 within $TOLERANCE point ${bad:+($bad)}"
	bad=$(compare $prog 1)
	[ -z "$bad" ]
	ok $? "$prog: children shares of perf's top 10 within $TOLERANCE point ${bad:+($bad)}"
	main=$(awk '/^Top functions by total/ { on = 1 } on && $3 == "main" { sub("%", "", $1); print $1; exit }' "$tmp/$prog.ours")
	[ -n "$main" ] && awk -v m="$main" 'BEGIN { exit !(m >= 90) }'
	ok $? "$prog: main holds the user time (${main:-missing}% total)"
done

# The folded stacks and the callers tree have real depth: leaves reach main.
"$REPORT" --no-inline --folded "$tmp/split.data" >"$tmp/folded" 2>/dev/null
deep=$(awk '$1 ~ /;main;work_loop;heavy_two_thirds$/ { s += $2 } END { print s + 0 }' "$tmp/folded")
all=$(awk '{ s += $NF } END { print s + 0 }' "$tmp/folded")
awk -v d="$deep" -v a="$all" 'BEGIN { exit !(a > 0 && d / a > 0.5) }'
ok $? "folded: $deep of $all samples in _start;...;main;work_loop;heavy_two_thirds"
"$REPORT" --callers "$tmp/truth.data" >"$tmp/callers" 2>/dev/null
awk '/^ *[0-9.]+%  part_mul / { on = 1; next } on && NF == 0 { exit } on && $2 == "main" { f = 1 } END { exit !f }' "$tmp/callers"
ok $? "callers tree: part_mul's callers reach main"
"$REPORT" --flamegraph - "$tmp/split.data" 2>/dev/null | grep -q '<title>main '
ok $? "the flame graph has a main frame"

# The ASan+UBSan build: the whole file, then a copy cut in the middle of the data.
for prog in split truth; do
	data=$tmp/$prog.data
	ASAN_OPTIONS=detect_leaks=1 "$ASAN_REPORT" --folded "$data" >"$tmp/asan.out" 2>"$tmp/asan.err"
	st=$?
	[ $st -eq 0 ] && ! grep -q 'Sanitizer\|runtime error' "$tmp/asan.err"
	ok $? "$prog: ASan build reads the dwarf file cleanly (exit $st)"
done
size=$(wc -c <"$tmp/split.data")
head -c $((size / 2 + 13)) "$tmp/split.data" >"$tmp/cut.data"
ASAN_OPTIONS=detect_leaks=1 "$ASAN_REPORT" "$tmp/cut.data" >"$tmp/asan.out" 2>"$tmp/asan.err"
st=$?
[ $st -lt 2 ] && ! grep -q 'Sanitizer\|runtime error' "$tmp/asan.err"
ok $? "ASan build reads a truncated dwarf file without a sanitizer report (exit $st)"
done_testing
