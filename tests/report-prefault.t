#!/bin/sh
# report-prefault.t - the prefault thread of report/read/prefault.c maps a
# big file's pages ahead of the record walker (it touches them on another
# CPU) without changing a byte of any view: every view of a
# `perf record --call-graph dwarf` file and of a `-g` file is the same with
# AUTOPROF_REPORT_NO_PREFAULT=1 (no thread), with the thread (the size
# threshold lowered to 0 by AUTOPROF_REPORT_PREFAULT_MIN) and with the thread
# one chunk ahead (AUTOPROF_REPORT_PREFAULT_AHEAD=1: it waits for the walker
# at every step). strace counts the threads made: one more with the thread
# than with the switch, none more for a file under the default threshold.
# The pages behind the walker are handed back, by the thread or by the
# walker alone: the peak resident memory of either stays well under that of
# a thread that never hands pages back (AUTOPROF_REPORT_PREFAULT_RELEASE
# past the file's size), the same reader on the same file.
#
# Run from the repository root after `make` (needs build/progs/mtwork).

. "$(dirname "$0")/lib.sh"

needs "$REPORT" "$B/progs/mtwork"
if ! timeout 120 perf record -q -F 4000 --call-graph dwarf -o dwarf.data "$B/progs/mtwork" 1 4 \
	>record.out 2>&1 || [ ! -s dwarf.data ] ||
	! timeout 120 perf record -q -F 4000 -g -o g.data "$B/progs/mtwork" 1 4 \
		>>record.out 2>&1 || [ ! -s g.data ]; then
	echo "1..0 # SKIP perf record does not work here: $(tail -n 1 record.out)"
	exit 0
fi
if [ "$(getconf _NPROCESSORS_ONLN)" -lt 2 ]; then
	echo "1..0 # SKIP one CPU online: the reader starts no prefault thread"
	exit 0
fi

plan 10

for f in dwarf g; do
	AUTOPROF_REPORT_NO_PREFAULT=1 AUTOPROF_REPORT_PREFAULT_MIN=0 report_views $f.data $f.off
	AUTOPROF_REPORT_PREFAULT_MIN=0 report_views $f.data $f.on
	AUTOPROF_REPORT_PREFAULT_MIN=0 AUTOPROF_REPORT_PREFAULT_AHEAD=1 report_views $f.data $f.near
	same_views $f.off $f.on "$f: every view is the same with the prefault thread"
	same_views $f.off $f.near "$f: and with the thread one chunk ahead"
done
grep -q 'mix_word' dwarf.on && grep -q 'mix_word' g.on
ok $? "the reports have samples (mix_word)"

# threads ENV...: threads made (clone, clone3) by a default report of dwarf.data
threads() {
	timeout 300 env "$@" strace -f -qq -e trace=clone,clone3 -o strace.out "$REPORT" dwarf.data \
		>/dev/null 2>&1
	grep -c 'clone' strace.out
}
diag "dwarf.data: $(stat -c %s dwarf.data) bytes"
off=$(threads AUTOPROF_REPORT_PREFAULT_MIN=0 AUTOPROF_REPORT_NO_PREFAULT=1)
on=$(threads AUTOPROF_REPORT_PREFAULT_MIN=0)
small=$(threads X=1)
diag "threads made: $off with AUTOPROF_REPORT_NO_PREFAULT=1, $on with the thread, $small by default"
is "$on" $((off + 1)) "AUTOPROF_REPORT_PREFAULT_MIN=0: one thread more than with the switch"
is "$small" "$off" "a file under the default size (256 MiB): no thread"
rm -f strace.out

# peak ENV...: the peak resident KiB of a default report of dwarf.data
peak() {
	python3 -c 'import os, subprocess, sys
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(os.wait4(p.pid, 0)[2].ru_maxrss)' env AUTOPROF_REPORT_PREFAULT_MIN=0 "$@" "$REPORT" dwarf.data
}
size=$(($(stat -c %s dwarf.data) / 1024))
never=$(peak AUTOPROF_REPORT_PREFAULT_RELEASE=1099511627776)
thread=$(peak AUTOPROF_REPORT_PREFAULT_RELEASE=1048576 AUTOPROF_REPORT_PREFAULT_AHEAD=4194304)
alone=$(peak AUTOPROF_REPORT_NO_PREFAULT=1)
diag "peak resident KiB: $never with no release, $thread releasing 1 MiB at a time in the thread, $alone without the thread; file $size KiB"
[ $((never - alone)) -gt $((size * 3 / 4)) ]
ok $? "no release: the file's pages stay resident (the reference sees the mapping)"
[ $((thread - alone)) -lt $((size / 2)) ]
ok $? "the thread hands back the pages behind the walker"
[ $((never - thread)) -gt $((size / 2)) ]
ok $? "and holds far less than with no release"
done_testing
