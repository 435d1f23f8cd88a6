#!/bin/sh
# report-dwarf-cache.t - the cached CFI rules of model/unwind_dwarf.c
# (fast_unwind(): one lookup and one read of the stack dump a frame) unwind
# `perf record --call-graph dwarf` samples exactly as libdw's general
# unwinder does: every view is byte-identical with AUTOPROF_REPORT_NO_CFI_CACHE=1
# (libdw for every sample), on files of a threaded program (mtwork), one whose
# threads sample inside the [vdso] (threads: clock_gettime, where libdw goes
# on by frame pointers) and one with several kinds of frames (truth). A shim
# (build/progs/libdwflcount.so) counts libdw's dwfl_getthread_frames() calls:
# the switch sends every sample to libdw, the cache most samples past it.
#
# Run from the repository root after `make` (needs build/progs/mtwork,
# build/progs/threads, build/progs/truth and build/progs/libdwflcount.so).

. "$(dirname "$0")/lib.sh"

SHIM=$B/progs/libdwflcount.so
needs "$REPORT" "$B/progs/mtwork" "$B/progs/threads" "$B/progs/truth"
if [ ! -f "$SHIM" ]; then
	echo "1..0 # SKIP $SHIM is not built (run make $SHIM)"
	exit 0
fi
if ! timeout 120 perf record -q -F 4000 --call-graph dwarf -o mtwork.data "$B/progs/mtwork" 1 4 \
	>record.out 2>&1 || [ ! -s mtwork.data ] ||
	! timeout 120 perf record -q -F 997 --call-graph dwarf -o threads.data "$B/progs/threads" 300 \
		>>record.out 2>&1 || [ ! -s threads.data ] ||
	! timeout 120 perf record -q -F 499 --call-graph dwarf -o truth.data "$B/progs/truth" all 0.4 \
		>>record.out 2>&1 || [ ! -s truth.data ]; then
	echo "1..0 # SKIP perf record --call-graph dwarf does not work here: $(tail -n 1 record.out)"
	exit 0
fi

plan 10

# calls FILE SWITCH: libdw's dwfl_getthread_frames() calls in a default report
calls() {
	rm -f calls.out
	timeout 300 env AUTOPROF_REPORT_NO_CFI_CACHE="$2" DWFL_COUNT_OUT=calls.out LD_PRELOAD="$SHIM" \
		"$REPORT" "$1" >/dev/null 2>&1
	cat calls.out
}

for f in mtwork threads truth; do
	AUTOPROF_REPORT_NO_CFI_CACHE=1 report_views $f.data $f.libdw
	report_views $f.data $f.cache
	same_views $f.libdw $f.cache "$f: the cached rules give every view byte for byte as libdw does"
done
grep -q 'mix_word' mtwork.cache
ok $? "the stacks are unwound (mix_word)"
grep -q 'clock_gettime' threads.cache && grep -q 'start_thread' threads.cache
ok $? "samples in the [vdso] are unwound too (clock_gettime, start_thread)"

n=$("$REPORT" mtwork.data 2>nostack.err | awk '/^Samples:/ { print $2 }')
# (less the samples perf recorded with no stack to unwind, which the report counts and says)
bare=$(sed -n 's/.* \([0-9]*\) dwarf samples had no user stack.*/\1/p' nostack.err)
slow=$(calls mtwork.data 1)
fast=$(calls mtwork.data 0)
diag "mtwork: $n samples (${bare:-0} without a stack), libdw unwinds $slow with the switch, $fast with the cache"
within "$slow" "$((n - ${bare:-0}))" $((n * 3)) "AUTOPROF_REPORT_NO_CFI_CACHE=1 sends every sample to libdw"
within "$fast" 0 $((n / 10)) "with the cache, libdw unwinds under a tenth of the samples"
within "$n" 1000 100000000 "the mtwork file has samples ($n)"
t=$("$REPORT" threads.data | awk '/^Samples:/ { print $2 }')
within "$(calls threads.data 1)" "$t" $((t * 3)) "the switch also sends the threads samples to libdw"
within "$(calls threads.data 0)" 1 $((t - 1)) "the [vdso] samples (only) go to libdw with the cache"
done_testing
