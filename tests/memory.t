#!/bin/sh
# AUTOPROF_MEMORY=1: native memory profiles. tests/progs/memtruth knows its
# allocations per site (printed as "site NAME ALLOCATED LEAKED"); the file's
# alloc-bytes event (period = estimated bytes) must put them at their sites:
# within 5% for every site above 1% of the total, summed over 5 runs at the
# default interval (512 KiB); exactly at AUTOPROF_MEMORY_INTERVAL=1, where
# live-bytes (what is still allocated at exit) is the exact leak list. Then
# each allocator function, realloc moving a block, frees from another thread,
# fork (the child's live set starts as its parent's), C++ new/delete, and
# perf report, perf script and hotspot's parser on the files. The program
# never notices: same output and exit status.
. "$(dirname "$0")/lib.sh"
needs "$B/progs/memtruth" "$B/progs/memcases" "$B/progs/memown" "$B/progs/libearlyalloc.so"
plan 40

P=$B/progs

. "$ROOT/tests/memlib.sh" # bytes, at

# profile OUT ARGS...: run ARGS under the library with memory profiling into OUT.
profile() {
	_out=$1
	shift
	# `profile OUT env VAR=VALUE... PROG`: the assignments go to the outer env, so that PROG is
	# the first image (a preloaded env may take a CPU sample on a loaded machine, and keep the
	# file's name)
	[ "$1" = env ] && shift
	timeout -s KILL 60 env AUTOPROF_MEMORY=1 AUTOPROF_OUTPUT="$_out" LD_PRELOAD="$MEMPRELOAD" "$@"
}

# ---- the program does not notice ----
timeout -s KILL 60 "$P/memtruth" >plain.out 2>plain.err
echo $? >plain.rc
profile t1.data "$P/memtruth" >prof.out 2>prof.err
echo $? >prof.rc
cmp -s plain.out prof.out && cmp -s plain.rc prof.rc && [ "$(cat prof.rc)" = 0 ]
ok $? "memtruth: same output and exit status as without the library" || diag_file prof.err

# ---- accuracy at the default interval: 5 runs ----
for i in 2 3 4 5; do
	profile t$i.data "$P/memtruth" >/dev/null 2>&1
done
total=$(awk '$1 == "site" { t += $3 } END { print t }' plain.out)
for site in churn_small churn_large churn_calloc grow; do
	truth=$(awk -v s=$site '$1 == "site" && $2 == s { print $3 }' plain.out)
	got=0
	for i in 1 2 3 4 5; do
		got=$((got + $(at t$i.data alloc-bytes $site)))
	done
	ratio=$(awk -v g=$got -v t=$truth 'BEGIN { printf "%.4f", g / (5 * t) }')
	within "$ratio" 0.95 1.05 "$site ($(awk -v a=$truth -v t=$total 'BEGIN { printf "%.0f", 100 * a / t }')% of the bytes): estimated bytes over 5 runs within 5%"
done
bad=""
for i in 1 2 3 4 5; do
	[ "$(at t$i.data live-bytes leak_big)" = 16777216 ] || bad="$bad t$i.data"
done
[ -z "$bad" ]
ok $? "leak_big (4 x 4 MiB, each above the interval): exactly 16777216 bytes live at exit in every run" ||
	diag "wrong in:$bad"
leak=0
for i in 1 2 3 4 5; do
	leak=$((leak + $(at t$i.data live-bytes leak_small)))
done
ratio=$(awk -v g=$leak 'BEGIN { printf "%.3f", g / (5 * 3000000) }')
within "$ratio" 0.5 1.5 "leak_small (3 MB of 100-byte blocks): found live at exit, about its size over 5 runs"
live=0
for i in 1 2 3 4 5; do
	for site in churn_small churn_large churn_calloc grow; do
		live=$((live + $(at t$i.data live-bytes $site)))
	done
done
is "$live" 0 "no live bytes at the sites that free everything"

# ---- every allocation: exact ----
profile one.data env AUTOPROF_MEMORY_INTERVAL=1 "$P/memtruth" 100 >one.out 2>one.err
bad=""
while read -r _ site alloc leak; do
	[ "$(at one.data alloc-bytes $site)" = "$alloc" ] || bad="$bad $site:$(at one.data alloc-bytes $site)/$alloc"
	[ "$(at one.data live-bytes $site)" = "$leak" ] || bad="$bad live-$site:$(at one.data live-bytes $site)/$leak"
done <one.out
[ -z "$bad" ] && [ -s one.out ]
ok $? "AUTOPROF_MEMORY_INTERVAL=1: allocated and live bytes exact at every site" || diag "$bad"
bytes one.data live-bytes | sort -k2,2nr >leaks.txt
awk '$1 != "_IO_file_doallocate" { print $1 }' leaks.txt | tr '\n' ' ' >leaks.names
is "$(cat leaks.names)" "leak_big leak_small " "the leak view: the leaking sites, biggest first, nothing else (but stdio's buffer)"

# ---- each allocator function ----
timeout -s KILL 60 "$P/memcases" funcs >plain.out 2>&1
profile funcs.data env AUTOPROF_MEMORY_INTERVAL=1 "$P/memcases" funcs >funcs.out 2>funcs.err
cmp -s plain.out funcs.out && grep -q 'usable OK' funcs.out
ok $? "memcases funcs: same output; malloc_usable_size sees the real blocks" || diag_file funcs.out
bad=""
for want in malloc_site:100100 calloc_site:300600 realloc_site:100300 reallocarray_site:401600 \
	aligned_alloc_site:512000 memalign_site:100600 valloc_site:100700 pvalloc_site:100800 \
	libc_malloc_site:100900 posix_memalign_site:101000; do
	site=${want%:*} n=${want#*:}
	[ "$(at funcs.data alloc-bytes $site)" = "$n" ] || bad="$bad $site:$(at funcs.data alloc-bytes $site)"
	[ "$(at funcs.data live-bytes $site)" = "$n" ] || bad="$bad live-$site:$(at funcs.data live-bytes $site)"
done
[ -z "$bad" ]
ok $? "malloc, calloc, realloc, reallocarray, aligned_alloc, memalign, valloc, pvalloc, __libc_malloc, posix_memalign: each site's bytes exact, allocated and live" || diag "$bad"
is "$(at funcs.data alloc-bytes free_site) $(at funcs.data live-bytes free_site)" "101100 0" \
	"free: allocated at free_site, nothing live there"

# ---- an end without a live set (SIGKILL) is not "no leaks"; an empty live set is ----
rm -f go
profile kill.data "$P/memcases" dump "$PWD/go" >kill.out 2>&1 &
for i in $(seq 200); do
	grep -q ready kill.out 2>/dev/null && break
	sleep 0.1
done
kill -KILL "$(awk '/^ready/ { print $2 }' kill.out)"
wait
timeout -s KILL 60 "$B/autoprof-report" --leaks kill.data >kill.leaks 2>kill.err
rc=$?
[ $rc = 1 ] && [ ! -s kill.leaks ] && [ "$(wc -l <kill.err)" = 1 ] && grep -q 'no live set' kill.err
ok $? "SIGKILL: --leaks says the file has no live set (status 1), not that nothing leaked" ||
	diag_file kill.err
cat >noleak.c <<'SRC'
#include <stdlib.h>
int main(void)
{
	for (int i = 0; i < 1000; i++)
		free(malloc(100));
	return 0;
}
SRC
cc -O2 -o noleak noleak.c
profile noleak.data env AUTOPROF_MEMORY_INTERVAL=1 ./noleak
timeout -s KILL 60 "$B/autoprof-report" --leaks noleak.data >noleak.leaks 2>&1
is "$?:$(cat noleak.leaks)" "0:Leaks: none. No sampled block was still allocated at the end." \
	"a program that frees everything: --leaks says none (its empty live set is marked)"

# ---- a program linked with jemalloc or tcmalloc (shared): the calls reach us, then theirs ----
for alloc in jemalloc.so.2 tcmalloc_minimal.so.4; do
	lib=$(ls /usr/lib/*/lib$alloc 2>/dev/null | head -1)
	if [ -z "$lib" ]; then
		skip "lib$alloc is not installed (scripts/install-deps.sh test)"
		continue
	fi
	cc -O2 -g -pthread -o "mem-$alloc" "$ROOT/tests/progs/memcases.c" "$lib" 2>cc.err ||
		{ ok 1 "memcases linked with lib$alloc builds"; diag_file cc.err; continue; }
	timeout -s KILL 60 "./mem-$alloc" funcs >plain-$alloc.out 2>&1
	profile "$alloc.data" env AUTOPROF_MEMORY_INTERVAL=1 "./mem-$alloc" funcs >"$alloc.out" 2>"$alloc.err"
	bad=""
	cmp -s "plain-$alloc.out" "$alloc.out" && grep -q 'usable OK' "$alloc.out" || bad="output"
	ldd "./mem-$alloc" | grep -q "lib$alloc" || bad="$bad not-linked"
	for want in malloc_site:100100 calloc_site:300600 realloc_site:100300 \
		reallocarray_site:401600 aligned_alloc_site:512000 memalign_site:100600 \
		valloc_site:100700 posix_memalign_site:101000; do
		site=${want%:*} n=${want#*:}
		[ "$(at "$alloc.data" alloc-bytes $site)" = "$n" ] || bad="$bad $site:$(at "$alloc.data" alloc-bytes $site)"
		[ "$(at "$alloc.data" live-bytes $site)" = "$n" ] || bad="$bad live-$site"
	done
	[ "$(at "$alloc.data" live-bytes free_site)" = 0 ] || bad="$bad live-free_site"
	[ -z "$bad" ]
	ok $? "linked with lib$alloc: same output, every site's bytes exact, allocated and live" ||
		{ diag "$bad"; diag_file "$alloc.err"; }
done

# ---- realloc moves a sampled block ----
profile moves.data env AUTOPROF_MEMORY_INTERVAL=1 "$P/memcases" realloc >moves.out 2>&1
grep -q 'moved yes, contents kept' moves.out
ok $? "realloc moved the block and kept its contents" || diag_file moves.out
is "$(at moves.data live-bytes moving_site) $(at moves.data live-bytes grow_site)" "0 1048576" \
	"the moved block is live at grow_site, no longer at moving_site"

# ---- another thread frees ----
profile thr.data env AUTOPROF_MEMORY_INTERVAL=1 "$P/memcases" threads >thr.out 2>&1
is "$(at thr.data alloc-bytes maker) $(at thr.data live-bytes maker) $(at thr.data live-bytes kept)" \
	"10240000 0 77700" "blocks freed by another thread leave the live set; the kept ones stay"
# whole stacks (memory_stack.c's walk, or libunwind's): each allocation's
# reaches the outermost frame, _start or a thread's clone3
"$REPORT" --folded -e alloc-objects one.data thr.data 2>folded.err |
	awk '{ t += $NF } /^(_start|clone3|__clone|clone);/ { w += $NF }
		END { printf "%d of %d\n", w, t; exit !(t > 50000 && w >= 0.99 * t) }' >whole.txt
ok $? "every allocation: 99% of the stacks whole, from _start or clone3 ($(cat whole.txt))" ||
	diag_file folded.err

# ---- a thread started before the library's constructor: no sampler of its own ----
timeout -s KILL 60 env AUTOPROF_MEMORY=1 AUTOPROF_MEMORY_INTERVAL=1 AUTOPROF_OUTPUT=early.data \
	LD_PRELOAD="$MEMPRELOAD $B/progs/libearlyalloc.so" "$P/memcases" windows >/dev/null 2>&1
is "$(at early.data alloc-bytes early_alloc) $(at early.data live-bytes early_alloc)" \
	"1000000 1000000" "a thread without a sampler: its allocations and leaks are in the file"

# ---- fork ----
profile fork.data env AUTOPROF_MEMORY_INTERVAL=1 "$P/memcases" fork >fork.out 2>&1
child=$(awk '/^child/ { print $2 }' fork.out)
is "$(at fork.data live-bytes before_fork) $(at fork.data live-bytes in_child)" "100000 0" \
	"fork: the parent's live set is its own"
is "$(at fork.data.$child live-bytes before_fork) $(at fork.data.$child live-bytes in_child)" \
	"100000 300000" "fork: the child's live set starts as its parent's"

# ---- a deadly signal ----
profile term.data "$P/memcases" term >term.out 2>term.err
rc=$?
timeout -s KILL 60 "$P/memcases" term >/dev/null 2>&1
is "$rc" "$?" "SIGTERM: the program's own exit status"
is "$(at term.data live-bytes before_term)" 10485760 "SIGTERM: the file holds the live set at the end"

# ---- windows: each window's file holds what is live at its end ----
mkdir win
(cd win && profile w.data env AUTOPROF_WINDOW=500ms "$P/memcases" windows >/dev/null 2>&1)
for f in win/w.data.*; do
	case $f in *.stat) continue ;; esac
	at $f live-bytes step
done >win.live
n=$(wc -l <win.live)
[ "$n" -ge 2 ] && [ "$(tail -1 win.live)" = 4194304 ] && [ "$(head -1 win.live)" -ge 1048576 ] &&
	sort -n -c win.live
ok $? "AUTOPROF_WINDOW: each window's file has the live set at its end, growing to 4 MiB ($n windows)" ||
	diag_file win.live

# ---- ctl dump: the file holds what is live now; a later live set retires it ----
profile dump.data env AUTOPROF_MEMORY_INTERVAL=1 "$P/memcases" dump "$PWD/go" >dump.out 2>dump.err &
dpid=$!
for i in $(seq 200); do
	grep -q ready dump.out 2>/dev/null && break
	sleep 0.1
done
timeout -s KILL 30 "$B/autoprof" ctl "$(awk '/^ready/ { print $2 }' dump.out)" dump >ctl.out 2>&1
cp dump.data dump1.data
touch go
wait $dpid
is "$(at dump1.data live-bytes dump_keep) $(at dump1.data live-bytes dump_gone)" "200000 300000" \
	"ctl dump: the file holds the live set of the moment, by stack" || diag_file ctl.out
is "$(at dump.data live-bytes dump_keep) $(at dump.data live-bytes dump_gone)" "200000 0" \
	"...and at the end only the end's live set counts (the dump's is retired in place)"
timeout -s KILL 60 "$B/autoprof-report" --leaks dump.data >dump.leaks 2>&1
grep -q dump_keep dump.leaks && ! grep -q dump_gone dump.leaks
ok $? "...--leaks shows what leaked at the end, not what the dump saw" || diag_file dump.leaks

# ---- an allocator linked into the program ----
profile own.data "$P/memown" >own.out 2>own.err
rc=$?
grep -v '^autoprof: no hardware ' own.err >own.err.rest
[ $rc = 0 ] && [ "$(cat own.out)" = done ] && [ "$(wc -l <own.err.rest)" = 1 ] &&
	grep -q 'do not reach the library' own.err.rest
ok $? "an allocator linked into the program: runs as without us, one line says memory is not profiled" ||
	diag_file own.err
"$REPORT" --leaks own.data >/dev/null 2>own.leaks
[ $? = 1 ] && grep -q 'no memory profile' own.leaks
ok $? "...and its file has no memory events (--leaks says so)" || diag_file own.leaks

# ---- C++ ----
if g++ -O2 -g -o memcxx "$ROOT/tests/progs/memcxx.cpp" 2>cxx.err; then
	./memcxx >cxx.plain
	profile cxx.data env AUTOPROF_MEMORY_INTERVAL=1 ./memcxx >cxx.out 2>cxx.err
	cmp -s cxx.plain cxx.out
	ok $? "C++: same output"
	is "$(at cxx.data alloc-bytes leaky) $(at cxx.data live-bytes leaky)" "100000 100000" \
		"C++: new[] is an allocation at its caller (not at operator new), leaked"
	profile cxx1.data env AUTOPROF_MEMORY_INTERVAL=1 AUTOPROF_STACK_DEPTH=1 ./memcxx >/dev/null 2>cxx1.err
	is "$(at cxx1.data alloc-bytes leaky)" "100000" \
		"C++: with AUTOPROF_STACK_DEPTH=1 too (the one frame is operator new's caller)"
	perf report -i cxx.data --stdio --no-children -g none --sort sym 2>/dev/null |
		awk '/^# Samples: .* of event / { on = ($0 ~ "event .live-bytes.$"); next } on && /%/' >cxx.live
	! grep -q 'Rb_tree\|mapping' cxx.live
	ok $? "C++: a std::map destroyed leaves nothing live" || diag_file cxx.live
else
	skip "no g++"
	skip "no g++"
	skip "no g++"
	skip "no g++"
fi

# ---- no system call inside the program's first sampled malloc ----
# glibc finds the main thread's stack by reading /proc/self/maps: done at
# memory start, not in the first sample (a seccomp filter set meanwhile,
# descriptor numbers other threads see).
printf '%s\n' '#include <stdlib.h>' '#include <unistd.h>' 'void *volatile keep;' \
	'int main(void) { write(1, "main\n", 5); keep = malloc(1000);' \
	'write(1, "after\n", 6); free(keep); return 0; }' >m1.c
if command -v strace >/dev/null && cc -O1 -o m1 m1.c 2>m1.err; then
	AUTOPROF_MEMORY_INTERVAL=1 AUTOPROF_OUTPUT=$T/m1.data timeout -s KILL 60 strace -o m1.st \
		-e trace=write,openat env AUTOPROF_MEMORY=1 LD_PRELOAD="$MEMPRELOAD" ./m1 >m1.out 2>&1
	sed -n '/write(1, "main/,/write(1, "after/p' m1.st >m1.between
	[ "$(wc -l <m1.between)" -ge 2 ] && ! grep -q openat m1.between
	ok $? "the first sampled malloc of the main thread opens no file" || diag_file m1.between
else
	skip "no strace or cc"
fi

# ---- the readers ----
perf report -i t1.data --stdio >rep.txt 2>rep.err
grep -q "of event 'alloc-bytes'" rep.txt && grep -q "of event 'live-bytes'" rep.txt
ok $? "perf report reads the file: alloc-bytes and live-bytes" || diag_file rep.err
perf script -i funcs.data -F event,period,ip,sym >script.txt 2>script.err
grep -q 'alloc-bytes' script.txt
ok $? "perf script prints the samples" || diag_file script.err
if [ -x "$PERFPARSER" ]; then
	timeout -s KILL 60 "$PERFPARSER" --input t1.data --print-stats >pp.txt 2>&1
	ok $? "hotspot's perfparser reads the file" || diag_file pp.txt
else
	skip "no hotspot-perfparser"
fi
[ -s perf.err ] && { diag "perf report said:"; sort -u perf.err | head -20 | sed "s/^/#   /"; }
done_testing
