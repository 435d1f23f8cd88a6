#!/bin/sh
# The library's fixed cost per process (issue 26, "start-up stays under 3 ms"),
# in deterministic proxies: the system calls and page faults the library adds
# to a program that does nothing (/bin/true), start and end together. A build
# (make -j) is made of such short processes. Each bound names the class of
# work it keeps out: the features read twice (the host's files, a realpath of
# every object), a signal table taken once per deadly signal, libunwind's
# fast-trace table made by a sampler that walks its stack copies instead.
# Measured here: 659 system calls before (64 readlink, 179 rt_sigprocmask,
# 107 rt_sigaction), 340 after (about 370 with the signals read first again);
# /bin/true alone makes 29. Page faults: 292 before, about 220 after (plain:
# about 60). Session 12: the CPU counts and description kept with the
# machine's description, the control folder checked once: about 375. Under
# the launcher a descendant that never samples makes no file either.
. "$(dirname "$0")/lib.sh"
needs "$LIB"
if ! command -v strace >/dev/null 2>&1; then
	echo "1..0 # SKIP strace is not installed"
	exit 0
fi
plan 32

PROG=/bin/true
# An empty control folder: the first process of a run sweeps the endpoints
# of runs that are gone, a system call each; other tests' are not ours to count.
mkdir -m 700 run
export XDG_RUNTIME_DIR="$T/run" AUTOPROF_QUIET=1

calls() { awk -v n="$2" '$NF == n { c = $4 } END { print c + 0 }' "$1"; }

# The first image of a boot describes the machine from /sys (about 200 system
# calls) and keeps it in the control folder for the next ones: count those.
LD_PRELOAD="$LIB" AUTOPROF_OUTPUT=warm.data "$PROG"
[ -f run/autoprof/machine ]
ok $? "the machine's description is kept for the next processes" || ls -R run

strace -f -qq -c -o plain.txt "$PROG"
strace -f -qq -c -o pre.txt -E LD_PRELOAD="$LIB" -E AUTOPROF_OUTPUT=pre.data "$PROG"
plain=$(calls plain.txt total)
pre=$(calls pre.txt total)
within "$((pre - plain))" 0 450 \
	"the library adds at most 450 system calls to a no-op program ($plain plain, $pre preloaded)" ||
	diag_file pre.txt
within "$(calls pre.txt readlink)" 0 1 \
	"object file names come from /proc/self/maps, not a realpath per object" || diag_file pre.txt
# At most two rt_sigaction per deadly signal: its disposition read, then ours
# written where it is SIG_DFL (a one-call exchange, ours in and the old one out,
# was withdrawn: putting an inherited SIG_IGN back through glibc changed what
# the program reads back, preload-signals.t 35), and a few others.
within "$(calls pre.txt rt_sigaction)" 0 120 "at most two rt_sigaction per deadly signal" ||
	diag_file pre.txt
within "$(calls pre.txt rt_sigprocmask)" 0 40 \
	"the signal table is taken once for every deadly signal, not once each" || diag_file pre.txt
# The control folder (the machine's description and the endpoint are kept in
# it) is checked once per image: one mkdir (before: one for each).
is "$(calls pre.txt mkdir)" 1 "the control folder is made or checked once per image" ||
	diag_file pre.txt
# libunwind's own set-up (200-250 us a process here: its memory probe's
# mincore calls among 20 system calls) is left to the processes that walk a
# live stack: a batched sampler walks its stack copies (unwind.c); one with
# threads sets it up as it makes its first (its pipe is made high at start,
# fds.c). (x86_64's libunwind probes with mincore; others differently.)
if [ "$(uname -m)" = x86_64 ]; then
	is "$(calls pre.txt mincore)" 0 "a batched run does not set libunwind up (no mincore probe)" ||
		diag_file pre.txt
	strace -f -qq -c -o single.txt -E LD_PRELOAD="$LIB" -E AUTOPROF_OUTPUT=single.data \
		-E AUTOPROF_BATCH=1 "$PROG"
	within "$(calls single.txt mincore)" 1 100000 \
		"a signal per sample sets it up before its first sample" || diag_file single.txt
	strace -f -qq -c -o threads.txt -E LD_PRELOAD="$LIB" -E AUTOPROF_OUTPUT=threads.data \
		"$B/progs/mtwork" 0.05 2 >/dev/null
	within "$(calls threads.txt mincore)" 1 100000 \
		"a batched process sets it up as it makes its first thread" || diag_file threads.txt
else
	skip "libunwind's set-up is told by its mincore probes on x86_64 only"
	skip "libunwind's set-up is told by its mincore probes on x86_64 only"
	skip "libunwind's set-up is told by its mincore probes on x86_64 only"
fi
# The library's small variables (.bss: a start touches nearly every page of
# it) are written in by one call, not a page fault each (10 us a fault in the
# VMs we measure): MADV_POPULATE_WRITE, where the kernel has it (5.14).
strace -f -qq -e trace=madvise -o madv.txt -E LD_PRELOAD="$LIB" -E AUTOPROF_OUTPUT=madv.data "$PROG"
if grep -q 'MADV_POPULATE_WRITE) = 0' madv.txt; then
	is "$(grep -c 'MADV_POPULATE_WRITE' madv.txt)" 1 "the library's small variables come in one call" ||
		diag_file madv.txt
else
	skip "this kernel has no MADV_POPULATE_WRITE (before 5.14)"
fi

rm -f pre.data*
strace -f -qq -e trace=openat,open -o opens.txt -E LD_PRELOAD="$LIB" -E AUTOPROF_OUTPUT=pre.data \
	"$PROG"
# The CPU counts and description are the boot's, kept with the machine's
# description: a later image reads neither /proc/cpuinfo nor the CPU lists
# (before: /proc/cpuinfo, cpu/possible and cpu/online in every image).
is "$(grep -c '"/proc/cpuinfo"\|cpu/possible"' opens.txt)" 0 \
	"a later image of the boot reads no /proc/cpuinfo nor cpu/possible" || diag_file opens.txt
is "$(grep -c '"/proc/self/maps"' opens.txt)" 1 \
	"/proc/self/maps is read once (the records and the features' file names)" ||
	diag_file opens.txt
# libunwind (and the liblzma it brings) is loaded where a walk needs it
# (unwind_lib.c), not linked in: a batched no-op process maps neither (0.3-0.4
# ms a process here). Where it is loaded, as a process makes its first thread,
# the program's own lookups find none of its symbols, as without us (linked
# in, dlsym(RTLD_DEFAULT, "lzma_code") found the library's copy).
is "$(grep -c 'libunwind\|liblzma' opens.txt)" 0 "a batched no-op process loads no libunwind" ||
	diag_file opens.txt
names="unw_backtrace _ULx86_64_step _ULaarch64_step lzma_code lzma_stream_decoder"
"$B/progs/lookups" $names >look-plain.txt 2>&1
AUTOPROF_OUTPUT=look.data LD_PRELOAD="$LIB" "$B/progs/lookups" $names >look-pre.txt 2>&1
grep -q '^unwinder=1$' look-pre.txt
ok $? "a process that makes a thread loads libunwind as it does" || diag_file look-pre.txt
is "$(grep -v '^unwinder=' look-pre.txt)" "$(grep -v '^unwinder=' look-plain.txt)" \
	"the program's dlsym(RTLD_DEFAULT) finds none of libunwind's or liblzma's symbols"
# A program that shuts itself in a folder before its first thread (a sandbox's
# chroot, through libc or syscall()) no longer has the file there: the library
# loads it first (wrap/confine.c).
for how in chroot syscall-chroot; do
	rm -rf jail && mkdir jail
	AUTOPROF_QUIET=0 AUTOPROF_OUTPUT=jail.data LD_PRELOAD="$LIB" "$B/progs/lookups" --$how jail \
		>look-jail.txt 2>look-jail.err
	if [ $? = 2 ]; then
		skip "chroot is refused here (not root)"
		skip "chroot is refused here (not root)"
		continue
	fi
	grep -q '^unwinder=1$' look-jail.txt
	ok $? "a program that chroots ($how) before its first thread still gets libunwind" ||
		diag_file look-jail.txt
	is "$(grep -c 'libunwind' look-jail.err)" 0 "and nothing is said of it ($how)" ||
		diag_file look-jail.err
done

# The file keeps its features: perf names every object by its build id.
perf buildid-list -i pre.data >bids.txt 2>bids.err
grep -q " $(readlink -f "$PROG")\$" bids.txt &&
	grep -q " $(readlink -f "$LIB")\$" bids.txt && grep -q '/libc\.so\.6$' bids.txt
ok $? "perf buildid-list names the program, libc and the library by their real paths" ||
	diag_file bids.txt

# libunwind's fast-trace table (256 KB written whole: 64 page faults a
# thread) is made only where the fast trace is the usual walk: a signal per
# sample (AUTOPROF_BATCH=1) makes it, the default batched sampler does not.
faults() {
	rm -f f.data*
	AUTOPROF_OUTPUT=f.data perf stat -x, -e page-faults -o faults.txt -- \
		env LD_PRELOAD="$LIB" "$@" "$PROG" 2>/dev/null
	awk -F, '/page-faults/ { print $1 }' faults.txt
}
batched=$(faults)
single=$(faults AUTOPROF_BATCH=1)
within "$((single - batched))" 40 1000 \
	"a batched sampler makes no fast-trace table ($batched page faults; $single with a signal per sample)"
[ -s f.data ] && perf script -i f.data >/dev/null 2>&1
ok $? "the file of a signal-per-sample run is readable"

# Settling probes the sampling event once per process: the kernel's rate limit
# is read only when the probe refuses the rate (4 system calls a process before),
# and a cycles event the machine lacks is probed by the run's first process only
# (AUTOPROF_PROBED), not once more by every descendant.
rm -f sh.data*
strace -f -qq -e trace=openat,perf_event_open -o sh.txt -E LD_PRELOAD="$LIB" \
	-E AUTOPROF_OUTPUT=sh.data sh -c "$PROG; $PROG; $PROG"
is "$(grep -c 'perf_event_max_sample_rate' sh.txt)" 0 \
	"the kernel's rate limit is not read at a rate within it" || diag_file sh.txt
missing=$(grep 'config=PERF_COUNT_HW_CPU_CYCLES, sample_freq=' sh.txt | grep -c ENOENT)
if [ "$missing" -gt 0 ]; then
	is "$missing" 1 "a missing cycles event is probed once in a run of 4 processes" ||
		diag_file sh.txt
else
	skip "the machine has a cycles event"
fi
rm -f hi.data*
AUTOPROF_FREQ=900000 LD_PRELOAD="$LIB" AUTOPROF_OUTPUT=hi.data AUTOPROF_QUIET=0 "$PROG" 2>hi.err
grep -q "AUTOPROF_FREQ=900000 is above kernel.perf_event_max_sample_rate; using" hi.err &&
	[ -s hi.data ]
ok $? "a rate above the kernel's limit is still clamped to it, and said" || diag_file hi.err

# A descendant's file is made at its first flush: the two that never sample
# make none (before: each created, wrote and removed NAME.<pid>); the run's
# first process keeps its file whatever (a profile with 0 samples says why).
rm -f lz.data*
# At 10 Hz none of them samples even under strace and a loaded machine (at
# 1 kHz a descendant slowed by strace takes a sample now and then, and keeps
# its file, as it should).
strace -f -qq -e trace=openat,unlink -o lz.txt -E LD_PRELOAD="$LIB" -E AUTOPROF_OUTPUT=lz.data \
	-E AUTOPROF_FREQ=10 sh -c "$PROG; $PROG"
is "$(grep -c 'lz\.data\.[0-9]*"' lz.txt)" 0 \
	"descendants that take no sample create and remove no file" || diag_file lz.txt
[ -z "$(ls lz.data.[0-9]* 2>/dev/null)" ] && perf report --header-only -i lz.data 2>/dev/null |
	grep -q 'event : name = cpu-clock\|event : name = cycles'
ok $? "the run's first process keeps its file, readable by perf" || ls lz.data*

# Under the launcher too (before: made at start, as the launcher found the
# run's processes that outlive the command by their files; it finds those
# with no file yet by their control endpoints, onefile.t 12).
rm -f lzl.data*
strace -f -qq -e trace=openat,unlink -o lzl.txt "$B/autoprof" -q -o lzl.data -F 10 -- \
	sh -c "$PROG; $PROG"
is "$(grep -c 'lzl\.data\.[0-9]*"' lzl.txt)" 0 \
	"under the launcher, descendants that take no sample create and remove no file" ||
	diag_file lzl.txt
[ -z "$(ls lzl.data.[0-9]* 2>/dev/null)" ] && perf report --header-only -i lzl.data >/dev/null 2>&1
ok $? "and the run's one file is there, readable by perf" || ls lzl.data*

# A batched sampler's ring at 1 kHz: 16 batches of 8 samples with 2 KB copies
# are 8% above 256 KB, and a power of two twice that (512 KB, allocated and
# zeroed by the kernel at mmap, charged to perf_event_mlock_kb) left half of
# it unused; 15 batches fit 256 KB (64 data pages and the header page). While
# its ramp drains at every sample (its first 16 drains), room for 30 ms of
# samples is enough: 64 KB and the header page. A process that ends within
# its ramp (here /bin/true) never gets the full ring; one that outlives it does.
maxring() { awk '/MAP_SHARED/ { sub(/^[^,]*, /, ""); sub(/,.*/, ""); if ($1 + 0 > m) m = $1 + 0 } END { print m + 0 }' "$1"; }
strace -f -qq -e trace=mmap -o ring.txt -E LD_PRELOAD="$LIB" -E AUTOPROF_OUTPUT=ring.data "$PROG"
first=$(awk '/MAP_SHARED/ { sub(/^[^,]*, /, ""); sub(/,.*/, ""); if ($1 + 0 > 4096) { print $1 + 0; exit } }' ring.txt)
ring=$(maxring ring.txt)
# (at most 65 pages: where a walk ran off the 2 KB copies they grew to 8 KB, still a ramp's ring)
[ "$first" = 69632 ] && [ "$ring" -le 266240 ]
ok $? "a short process's sampler ring at 1 kHz is its ramp's: 17 pages first ($first), $ring at most" ||
	diag_file ring.txt
rm -f long.data*
strace -f -qq -e trace=mmap -o ring2.txt -E LD_PRELOAD="$LIB" -E AUTOPROF_OUTPUT=long.data \
	"$B/progs/costloop" 0.3 1 1 >/dev/null
ring=$(maxring ring2.txt)
# (65 pages with 2 KB copies, 257 where a walk during the ramp ran off them and they grew to 8 KB)
within "$ring" 266240 1052672 "one that outlives its ramp gets the ring its batches need ($ring bytes)" ||
	diag_file ring2.txt
lost=$(perf report -i long.data --stdio 2>/dev/null | sed -n 's/^# Total Lost Samples: //p')
is "$lost" 0 "and loses no sample on the way"
done_testing
