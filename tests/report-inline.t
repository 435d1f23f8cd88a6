#!/bin/sh
# report-inline.t - inlined functions are frames of their own in every view
# and export (perf report --inline, hotspot): tests/progs/inlined.c, built
# -O2 -g, spends its time in mix(), inlined into checksum(), inlined into
# run(); --no-inline shows only run(). The same with the program's DWARF
# compressed (SHF_COMPRESSED, read a CU at a time: report/model/dwarf_lazy.c).
. "$(dirname "$0")/lib.sh"

needs "$B/progs/inlined"
plan 13

timeout -s KILL 60 perf record -q -g -e cpu-clock -o i.data "$B/progs/inlined" 20 >/dev/null 2>&1
ok $? "perf record -g of the inlined program"
R="timeout -s KILL 60 $REPORT"

$R i.data >flat.txt 2>/dev/null
awk '/^Top functions by self/ { t = 1; next } t && $1 ~ /^[0-9.]+%$/ { print $3; exit }' flat.txt >top.txt
is "$(cat top.txt)" mix "flat: the inlined leaf is the top self function"
grep -q ' checksum  ' flat.txt && grep -q ' run\.constprop\.0  \| run  ' flat.txt
ok $? "flat: checksum and run have total time"
$R --no-inline i.data 2>/dev/null | awk '/^Top functions by self/ { t = 1; next } t && $1 ~ /^[0-9.]+%$/ { print $3; exit }' >noinl.txt
case "$(cat noinl.txt)" in run*) r=0 ;; *) r=1 ;; esac
ok $r "--no-inline: the symbol's function ($(cat noinl.txt))"
$R --folded i.data 2>/dev/null | grep -qE '(^|;)run[^;]*;checksum;mix [0-9]+$'
ok $? "folded: run;checksum;mix"
$R --tree i.data 2>/dev/null | grep -q checksum
ok $? "tree: checksum in the call tree"
$R --callers i.data 2>/dev/null | grep -q checksum
ok $? "callers: checksum among mix's callers"
$R --flamegraph f.svg i.data >/dev/null 2>&1 && grep -q 'checksum' f.svg && grep -q '>mix' f.svg
ok $? "flame graph: mix and checksum are frames"
$R --speedscope s.json i.data >/dev/null 2>&1 && grep -q '"name": "checksum"' s.json
ok $? "speedscope: checksum is a frame"
$R --json i.data 2>/dev/null | grep -q '"checksum"'
ok $? "json: checksum is named"
$R --pprof p.pb.gz i.data >/dev/null 2>&1
if command -v go >/dev/null 2>&1; then
	timeout -s KILL 60 go tool pprof -traces p.pb.gz 2>/dev/null | grep -A2 'mix (inline)' | grep -q 'checksum (inline)'
	ok $? "pprof: mix and checksum are inline Lines of one Location"
else
	skip "no go"
fi
$R --sort srcline i.data 2>/dev/null | grep -q 'inlined\.c:2[0-9]'
ok $? "--sort srcline: checksum's frame has the line of its call site"
# The same program with its debug sections compressed (as Debian's -dbgsym
# files are): read by parts, every view the same as from the plain file.
cp "$B/progs/inlined" prog
timeout -s KILL 60 perf record -q -g -e cpu-clock -o c.data ./prog 20 >/dev/null 2>&1
for v in "" --folded "--sort srcline" --lines "--hot-lines" --json; do
	# shellcheck disable=SC2086
	$R $v c.data >>plain.txt 2>&1
done
objcopy --compress-debug-sections=zlib prog prog.z && mv prog.z prog
for v in "" --folded "--sort srcline" --lines "--hot-lines" --json; do
	# shellcheck disable=SC2086
	$R $v c.data >>packed.txt 2>&1
done
readelf -S prog | grep -A1 debug_info | grep -q ' C '
packed=$?
cmp -s plain.txt packed.txt && [ $packed -eq 0 ] && grep -q checksum packed.txt
ok $? "compressed DWARF: the same frames and lines in every view as the plain file"
done_testing
