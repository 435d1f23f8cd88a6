#!/bin/sh
# The dynamic loader and the unwinders: samples that land in libgcc_s's
# unwinder (Rust panics, C++ exceptions), dlopen/dlclose storms on two threads
# at 10 kHz (the loader's lock), dlopen by RUNPATH=$ORIGIN (dlopen's caller
# must stay the program's), and libraries unloaded before the end that still
# resolve by the MMAP2 records, which carry their build ids.
. "$(dirname "$0")/lib.sh"
plan 17

P=$B/progs
SRC=$ROOT/tests/progs

# 1-2. RUNPATH=$ORIGIN/lib: dlopen("libldplug.so") finds the library beside the program.
mkdir -p bin/lib
cp "$P/libldplug.so" bin/lib/
cc -O2 -o bin/ldrunpath "$SRC/ldrunpath.c" -ldl -Wl,-rpath,'$ORIGIN/lib',--enable-new-dtags
bin/ldrunpath >rp.plain 2>&1
rc_plain=$?
AUTOPROF_QUIET=1 AUTOPROF_OUTPUT=rp.data LD_PRELOAD=$LIB bin/ldrunpath >rp.prof 2>&1
rc_prof=$?
is "$rc_prof/$rc_plain" "0/0" "RUNPATH \$ORIGIN dlopen: exit 0 plain and profiled"
cmp -s rp.plain rp.prof
ok $? "RUNPATH \$ORIGIN dlopen: same output ($(cat rp.prof))"

# 3-6. Two threads dlopen/dlclose a library in a loop at 10 kHz: never hangs.
hung=0 failed=0
# Run 1 spends its time in the library, runs 2-3 in the loader alone.
for i in 1 2 3; do
	ms=0.3
	[ $i -gt 1 ] && ms=0
	timeout 60 env AUTOPROF_QUIET=1 AUTOPROF_FREQ=10000 AUTOPROF_OUTPUT=storm$i.data \
		LD_PRELOAD="$LIB" "$P/lddlopen" threads "$P/libldplug.so" 4 $ms >storm$i.out 2>storm$i.err
	rc=$?
	[ $rc -eq 124 ] && hung=$((hung + 1))
	[ $rc -eq 0 ] && [ "$(cat storm$i.out)" = done ] || failed=$((failed + 1))
done
is "$hung" 0 "dlopen/dlclose on two threads at 10 kHz: no run hangs (3 runs of 4 s)"
is "$failed" 0 "dlopen/dlclose on two threads at 10 kHz: every run finishes cleanly"
[ $failed -eq 0 ] || diag_file storm1.err

# Samples in the library, unloaded by dlclose long before the end, resolve.
perf report -i storm1.data --stdio --no-children --sort dso,sym >storm.rep 2>storm.rerr
clean_stderr storm.rerr
ok $? "perf report reads the dlopen storm's file with nothing on stderr"
[ -s storm.rerr ] && diag_file storm.rerr
share=$(perf_share storm1.data plug_work)
within "${share:-0}" 20 100 "samples in the unloaded library resolve to plug_work"

# 7-9. Its MMAP2 records name it by build id, which perf reads.
want=$(readelf -n "$P/libldplug.so" | awk '/Build ID/ { print $3; exit }')
perf script -i storm1.data --show-mmap-events 2>mm.err | grep 'MMAP2.*libldplug' >mm.txt
grep -q "<$want>" mm.txt
ok $? "the library's MMAP2 records carry its build id ($want)"
clean_stderr mm.err
ok $? "perf script --show-mmap-events: nothing on stderr"
perf buildid-list -i storm1.data >bid.txt 2>bid.err
clean_stderr bid.err && grep -q libc.so bid.txt
ok $? "perf buildid-list reads the file with nothing on stderr"

# 10-11. Throw and catch C++ exceptions on four threads at 10 kHz: never crashes.
if command -v g++ >/dev/null 2>&1 && g++ -O2 -g -pthread -o ldthrow "$SRC/ldthrow.cpp"; then
	./ldthrow 50000 >throw.plain
	bad=0
	for i in 1 2 3; do
		timeout 120 env AUTOPROF_QUIET=1 AUTOPROF_FREQ=10000 AUTOPROF_OUTPUT=throw$i.data \
			LD_PRELOAD="$LIB" ./ldthrow 50000 >throw$i.out 2>throw$i.err
		rc=$?
		[ $rc -eq 0 ] && cmp -s throw.plain throw$i.out || { bad=$((bad + 1)); diag "run $i: status $rc"; }
	done
	is "$bad" 0 "C++ throw/catch on 4 threads at 10 kHz: 3 runs, same output, exit 0"
	perf report -i throw1.data --stdio >/dev/null 2>throw.rerr
	clean_stderr throw.rerr
	ok $? "perf report reads the C++ run's file with nothing on stderr"
else
	skip "no g++"
	skip "no g++"
fi

# 12-13. Rust catch_unwind of frequent panics on four threads at 10 kHz.
RUSTC=
for r in rustc /root/.cargo/bin/rustc; do
	command -v "$r" >/dev/null 2>&1 && "$r" --version >/dev/null 2>&1 && RUSTC=$r && break
done
if [ -n "$RUSTC" ] && "$RUSTC" -O -o ldpanic "$SRC/ldpanic.rs" 2>rustc.err; then
	./ldpanic >panic.plain
	bad=0
	for i in 1 2 3; do
		timeout 120 env AUTOPROF_QUIET=1 AUTOPROF_FREQ=10000 AUTOPROF_OUTPUT=panic$i.data \
			LD_PRELOAD="$LIB" ./ldpanic >panic$i.out 2>panic$i.err
		rc=$?
		[ $rc -eq 0 ] && cmp -s panic.plain panic$i.out || { bad=$((bad + 1)); diag "run $i: status $rc"; }
	done
	is "$bad" 0 "Rust catch_unwind on 4 threads at 10 kHz: 3 runs, same output, exit 0"
	perf report -i panic1.data --stdio >/dev/null 2>panic.rerr
	clean_stderr panic.rerr
	ok $? "perf report reads the Rust run's file with nothing on stderr"
else
	skip "no working rustc"
	skip "no working rustc"
fi

# 14-15. The skipped samples are counted and said (AUTOPROF_VERBOSE).
AUTOPROF_VERBOSE=1 AUTOPROF_FREQ=10000 AUTOPROF_OUTPUT=v.data LD_PRELOAD="$LIB" \
	timeout 60 "$P/lddlopen" threads "$P/libldplug.so" 2 0.3 >v.out 2>v.err
is "$(cat v.out)" done "a verbose storm finishes"
grep -q 'not unwound: [0-9]* samples in the loader, an unwinder or autoprof, [0-9]* during a dlclose' v.err
ok $? "the samples left without a stack are counted ($(grep -o 'not unwound.*' v.err))"

# 16-17. A dlopen costs no re-read of the maps: 2000 dlopen/dlclose pairs, timed.
best() { sort -n | head -1; }
plain=$(for i in 1 2 3; do "$P/lddlopen" bench "$P/libldplug.so" 2000 2>&1 >/dev/null | awk '{ print $2 }'; done | best)
prof=$(for i in 1 2 3; do AUTOPROF_QUIET=1 AUTOPROF_OUTPUT=bench.data LD_PRELOAD="$LIB" \
	"$P/lddlopen" bench "$P/libldplug.so" 2000 2>&1 >/dev/null | awk '{ print $2 }'; done | best)
[ -n "$plain" ] && [ -n "$prof" ]
ok $? "2000 dlopen/dlclose pairs run plain and profiled"
diag "2000 dlopen/dlclose pairs: plain $((plain / 1000000)) ms, profiled $((prof / 1000000)) ms"
perf report -i bench.data --stdio >/dev/null 2>bench.rerr
clean_stderr bench.rerr
ok $? "perf report reads the dlopen benchmark's file with nothing on stderr"

done_testing
