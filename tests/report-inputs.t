#!/bin/sh
# report-inputs.t - the inputs autoprof-report reads besides plain perf.data
# files, and the outputs it refuses to write.
#
#  - never overwrite an input: an output (--flamegraph FILE, --csv DIR,
#    standard output) that is an input or an existing perf.data file is
#    refused with one line and exit 1, and the inputs stay byte for byte;
#  - `perf record -z` (zstd) files, pipe-mode files (`perf record -o -`) and
#    pipe mode on standard input (`-`) agree with
#    `perf report --stdio --no-children` on the top 10 self shares within
#    0.5 points;
#  - a pipe-mode file's [vdso] (no build id) recorded on this kernel is
#    named from this machine's vdso: perf's names of it are ours;
#  - an unsupported compression type is one line and exit 1; the sanitizer
#    build reads truncated copies of both new formats cleanly.
#
# Run from the repository root after `make` (needs build/autoprof-report,
# build/asan/autoprof-report and build/progs/split).

. "$(dirname "$0")/lib.sh"
ASAN_REPORT=$B/asan/autoprof-report
SPLIT=$B/progs/split
TOLERANCE=0.5

needs "$REPORT" "$ASAN_REPORT" "$SPLIT"
if ! perf record -q -e cpu-clock -g -o plain.data "$SPLIT" 300 >record.out 2>&1 ||
	[ ! -s plain.data ]; then
	echo "1..0 # SKIP perf record does not work here: $(tail -n 1 record.out)"
	exit 0
fi
perf record -q -z -e cpu-clock -g -o z.data "$SPLIT" 300 >/dev/null 2>&1
perf record -q -e cpu-clock -g -o - "$SPLIT" 300 >pipe.data 2>/dev/null
perf record -q -z -e cpu-clock -g -o - "$SPLIT" 300 >pipez.data 2>/dev/null
perf record -q -e cpu-clock -g -o - "$SPLIT" 300 2>/dev/null | tee stdin.data |
	"$REPORT" --no-inline --top 200 - >stdin.txt 2>stdin.err
stdin_status=$?

plan 28

# refused OUTPUT_NAME DESCRIPTION -- ARGS...: exit 1, one line naming the
# output, and every *.data file here unchanged.
refused() {
	_what=$1
	_desc=$2
	shift 3
	md5sum ./*.data >before.md5
	"$REPORT" "$@" >refused.out 2>refused.err
	_st=$?
	[ $_st -eq 1 ] && [ "$(wc -l <refused.err)" -eq 1 ] &&
		grep -q "^autoprof-report: .*$_what" refused.err
	ok $? "$_desc: refused in one line, exit 1 (exit $_st)"
	md5sum -c --quiet before.md5 >/dev/null 2>&1
	ok $? "$_desc: every input unchanged"
	[ -n "$(cat refused.err)" ] && diag "$(cat refused.err)"
}

cp plain.data perf.data
refused perf.data "--flamegraph perf.data (perf's habit: the input is ./perf.data)" -- \
	--flamegraph perf.data
refused perf.data "--flamegraph perf.data other.data" -- --flamegraph perf.data z.data
ln -s z.data link.svg
refused link.svg "--flamegraph to a symlink to the input" -- --flamegraph link.svg z.data
refused pipe.data "--flamegraph onto a pipe-mode perf.data" -- --flamegraph pipe.data z.data
refused perf.data "--csv onto an input" -- --csv perf.data
md5sum ./*.data >before.md5
"$REPORT" z.data >>z.data 2>refused.err
st=$?
[ $st -eq 1 ] && [ "$(wc -l <refused.err)" -eq 1 ] && md5sum -c --quiet before.md5 >/dev/null 2>&1
ok $? "standard output appended to the input: refused, input unchanged (exit $st)"
"$REPORT" --flamegraph new.svg perf.data >/dev/null 2>&1 && [ -s new.svg ] &&
	"$REPORT" --flamegraph new.svg perf.data >/dev/null 2>&1
ok $? "a new flame graph, and rewriting it, still work"

# agree NAME FILE OURS: perf's top 10 self shares (-g none) against ours.
agree() {
	perf report -i "$2" --stdio --no-children --sort sym -g none 2>/dev/null |
		awk '$1 ~ /^[0-9.]+%$/ && $2 ~ /^\[/ { sub(/%/, "", $1); print $1, $3 }' |
		head -n 10 >"$1.perf"
	awk '/by self time/ { t = 1; next } /by total time/ { t = 0 }
		t && $1 ~ /^[0-9.]+%$/ { sub(/%/, "", $1); print $1, $3 }' "$3" >"$1.ours"
	awk -v t=$TOLERANCE 'NR == FNR { ours[$2] = $1; next }
		{ n++; d = $1 - (($2 in ours) ? ours[$2] : 0); if (d > t || -d > t) bad++ }
		END { exit !(n >= 2 && !bad) }' "$1.ours" "$1.perf"
	ok $? "$1: perf report's top 10 self shares within $TOLERANCE points"
	grep -q ' heavy_two_thirds$' "$1.ours"
	ok $? "$1: heavy_two_thirds is in our report"
	if ! awk -v t=$TOLERANCE 'NR == FNR { ours[$2] = $1; next }
		{ d = $1 - (($2 in ours) ? ours[$2] : 0); if (d > t || -d > t) exit 1 }' \
		"$1.ours" "$1.perf"; then
		diag "perf:"
		diag_file "$1.perf"
		diag "ours:"
		diag_file "$1.ours"
	fi
}

# --no-inline: perf names the symbol's function (split.c inlines spin()).
for f in z pipe pipez; do
	"$REPORT" --no-inline --top 200 $f.data >$f.txt 2>$f.err
	st=$?
	[ $st -eq 0 ] && clean_stderr $f.err
	ok $? "$f.data reads without a warning (exit $st)"
	agree $f $f.data $f.txt
done
[ $stdin_status -eq 0 ] && clean_stderr stdin.err
ok $? "pipe mode on standard input (-) reads without a warning (exit $stdin_status)"
agree stdin stdin.data stdin.txt

# An unknown compression type in HEADER_COMPRESSED: one line, exit 1.
python3 - z.data zbad.data <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], 'rb').read())
data_off, data_size = struct.unpack_from('<QQ', b, 40)
feats = int.from_bytes(b[72:104], 'little')
idx = bin(feats & ((1 << 27) - 1)).count('1')
assert feats >> 27 & 1
off, size = struct.unpack_from('<QQ', b, data_off + data_size + 16 * idx)
struct.pack_into('<I', b, off + 4, 7)
open(sys.argv[2], 'wb').write(b)
PY
"$REPORT" zbad.data >/dev/null 2>zbad.err
st=$?
[ $st -eq 1 ] && [ "$(wc -l <zbad.err)" -eq 1 ] && grep -q 'compressed with type 7' zbad.err
ok $? "an unknown compression type is one line, exit 1 (exit $st): $(cat zbad.err)"

# A [vdso] in a pipe-mode file (which holds no build id) recorded on this kernel: the
# functions perf report names in it, we name too (they were [vdso]+0xOFF). (Not "and no
# more": under load a sample in gettimeofday, which we named, perf did not.)
perf record -q -e cpu-clock -g -o - python3 -c 'import time
for _ in range(1000000): time.monotonic()' 2>/dev/null >vdso.data
perf report -i vdso.data --stdio --no-children --sort dso,sym -g none 2>/dev/null |
	awk '$2 == "[vdso]" && $4 !~ /^0x/ { print $4 }' | sort -u >vdso.perf
"$REPORT" --no-inline --top 1000 vdso.data 2>&1 | awk '$NF == "[vdso]" && $3 !~ /^\[vdso\]\+0x/ { print $3 }' |
	sort -u >vdso.ours
if [ -s vdso.perf ]; then
	[ -z "$(comm -23 vdso.perf vdso.ours)" ]
	ok $? "pipe mode on this kernel: the vdso's functions named as perf names them ($(tr '\n' ' ' <vdso.perf))" ||
		{ diag "perf:" && diag_file vdso.perf && diag "ours:" && diag_file vdso.ours; }
else
	skip "no sample of python3's clock_gettime in the vdso that perf names"
fi

for f in z pipe; do
	size=$(wc -c <$f.data)
	head -c $((size * 2 / 3)) $f.data >trunc.data
	"$ASAN_REPORT" trunc.data >/dev/null 2>trunc.err
	st=$?
	[ $st -le 1 ] && ! grep -q 'Sanitizer\|runtime error' trunc.err
	ok $? "sanitizer build: a truncated $f.data is read cleanly (exit $st)"
done
done_testing
