#!/bin/sh
# Allocators' own entry points under --memory (preload/memlib/allocx.c):
# jemalloc's mallocx, rallocx, xallocx, dallocx and sdallocx; tcmalloc's
# tc_malloc & co, tc_new & co, tc_free & co, cfree, and its standard
# functions that call tc_memalign through the PLT (each block counted
# once); C23's free_sized and free_aligned_sized of a program's allocator;
# the stand-ins for a program that looks for mallocx with a weak reference.
# The programs (tests/progs/allocx/) know their bytes per site: at
# --memory-interval 1 every site's allocated and live bytes are exact, and
# a block freed through another entry point than the one that allocated it
# is not live (before: false leaks, and blocks never seen). Then a program
# whose memory comes from an arena of its own over mmap: one line says that
# most of its memory was not seen, and autoprof-report says it from the
# file (before: "Leaks: none." and nothing else); a program whose memory
# comes from malloc, held or freed, gets no such line.
. "$(dirname "$0")/lib.sh"
needs "$LIB" "$B/libautoprof-memory.so" "$B/autoprof" "$B/autoprof-report"
if ! command -v cc >/dev/null 2>&1; then
	echo "1..0 # SKIP no cc"
	exit 0
fi
plan 17

. "$ROOT/tests/memlib.sh" # bytes, at
P=$ROOT/tests/progs/allocx

# run NAME PROG...: PROG plain (NAME.0.out: output and status) and under autoprof --memory
# --memory-interval 1 -q (NAME.data, NAME.out, NAME.err); true when the outputs are the same.
run() {
	_name=$1
	shift
	timeout -s KILL 60 "$@" >"$_name.0.out" 2>/dev/null
	echo "status $?" >>"$_name.0.out"
	timeout -s KILL 60 "$B/autoprof" -q --memory --memory-interval 1 -o "$_name.data" -- "$@" \
		>"$_name.out" 2>"$_name.err"
	echo "status $?" >>"$_name.out"
	cmp -s "$_name.0.out" "$_name.out"
}

# sites FILE EVENT:SYMBOL:BYTES...: what is wrong with FILE's bytes per site (empty: all exact).
sites() {
	_f=$1
	shift
	_bad=""
	for _w in "$@"; do
		_ev=${_w%%:*} _r=${_w#*:}
		_s=${_r%%:*} _n=${_r#*:}
		_got=$(at "$_f" "$_ev" "$_s")
		[ "$_got" = "$_n" ] || _bad="$_bad $_ev@$_s=$_got(want $_n)"
	done
	echo "$_bad"
}

lib_of() { ls /usr/lib/*/"$1" 2>/dev/null | head -1; }

# ---- jemalloc ----
je=$(lib_of libjemalloc.so.2)
if [ -n "$je" ] && cc -O2 -g -o je "$P/je.c" "$je" 2>cc.err; then
	run je ./je && grep -qx 'right sallocx 1 nallocx 112' je.out
	ok $? "jemalloc: the program's output (mallocx's zeroed, aligned block) and status as without us" ||
		{ diag_file je.out; diag_file je.err; }
	bad=$(sites je.data alloc-bytes:leak_mallocx:3000000 live-bytes:leak_mallocx:3000000 \
		alloc-bytes:churn_dallocx:3000000 live-bytes:churn_dallocx:0 \
		alloc-bytes:churn_mallocx:3500000 live-bytes:churn_mallocx:0 \
		alloc-bytes:leak_rallocx:501000 live-bytes:leak_rallocx:500000 \
		alloc-bytes:churn_rallocx:16000 live-bytes:churn_rallocx:0 \
		alloc-bytes:leak_xallocx:210000 live-bytes:leak_xallocx:110000)
	[ -z "$bad" ]
	ok $? "jemalloc: mallocx, rallocx (moved), xallocx (shrunk, failed) counted; malloc's and mallocx's blocks freed by dallocx, sdallocx, free not live" ||
		{ diag "$bad"; diag_file je.err; }
	if command -v go >/dev/null; then
		"$B/autoprof-report" --pprof je.pb.gz je.data 2>pprof.err
		timeout -s KILL 120 go tool pprof -unit=B -sample_index=inuse_space -top je.pb.gz >inuse.txt 2>&1
		awk '/flat%/ { on = 1; next } on { print $1, $NF }' inuse.txt | head -3 | tr '\n' ' ' >inuse.rows
		is "$(cat inuse.rows)" "3000000B leak_mallocx 500000B leak_rallocx 110000B leak_xallocx " \
			"jemalloc: go tool pprof -sample_index=inuse_space -top: mallocx's, rallocx's and xallocx's blocks" ||
			diag_file inuse.txt
	else
		skip "no go"
	fi
	if cc -O2 -g -pthread -o jethreads "$P/jethreads.c" "$je" 2>cc.err; then
		run jethreads ./jethreads
		is "$? $(at jethreads.data alloc-bytes work) $(at jethreads.data live-bytes work)" "0 29940000 0" \
			"jemalloc, 4 threads racing from their first mallocx, rallocx, dallocx, sdallocx on: every byte, none live" ||
			diag_file jethreads.err
	else
		skip "jethreads.c does not build"
	fi
else
	for i in 1 2 3 4; do skip "libjemalloc.so.2 is not installed (scripts/install-deps.sh test), or the program does not build"; done
fi

# ---- tcmalloc: the minimal one (libtcmalloc-minimal4) and the full one (libgoogle-perftools4) ----
for tc in libtcmalloc_minimal.so.4 libtcmalloc.so.4; do
	lib=$(lib_of $tc)
	if [ -z "$lib" ] || ! cc -O2 -g -o "tc-$tc" "$P/tc.c" "$lib" 2>cc.err; then
		for i in 1 2; do skip "$tc is not installed (scripts/install-deps.sh test), or the program does not build"; done
		continue
	fi
	run "tc-$tc" "./tc-$tc" && grep -qx '1 1' "tc-$tc.out"
	ok $? "$tc: the program's output and status as without us" || diag_file "tc-$tc.err"
	bad=$(sites "tc-$tc.data" alloc-bytes:leak_tc:3816036 live-bytes:leak_tc:3816036 \
		alloc-bytes:leak_tc_new:244096 live-bytes:leak_tc_new:244096 \
		alloc-bytes:leak_tc_realloc:110100 live-bytes:leak_tc_realloc:110000 \
		alloc-bytes:leak_std:504800 live-bytes:leak_std:504800 \
		alloc-bytes:churn_tc:3751200 live-bytes:churn_tc:0)
	[ -z "$bad" ]
	ok $? "$tc: tc_malloc & co and tc_new & co counted at their caller, posix_memalign/valloc/pvalloc once; blocks freed by tc_free & co, cfree, tc_delete & co not live" ||
		{ diag "$bad"; diag_file "tc-$tc.err"; }
done

# ---- tc_new's std::bad_alloc passes through the wrappers' frames ----
lib=$(lib_of libtcmalloc_minimal.so.4)
cat >tcnew.cc <<'EOF'
#include <cstdint>
#include <cstdio>
#include <new>
extern "C" void *tc_new(size_t);
extern "C" void *tc_new_nothrow(size_t, const std::nothrow_t &) noexcept;
int main()
{
	try {
		std::printf("got %p\n", tc_new(SIZE_MAX / 2));
	} catch (const std::bad_alloc &) {
		std::printf("bad_alloc caught\n");
	}
	std::printf("%d\n", tc_new_nothrow(SIZE_MAX / 2, std::nothrow) == nullptr);
	return 0;
}
EOF
if [ -n "$lib" ] && command -v g++ >/dev/null && g++ -O2 -g -o tcnew tcnew.cc "$lib" 2>cc.err; then
	run tcnew ./tcnew && [ "$(head -2 tcnew.out | tr '\n' ' ')" = "bad_alloc caught 1 " ]
	ok $? "tc_new of a size no allocator grants: std::bad_alloc caught as without us" ||
		{ diag_file tcnew.out; diag_file tcnew.err; }
else
	skip "no libtcmalloc_minimal.so.4 or g++"
fi

# ---- C23's free_sized and free_aligned_sized, defined by the program's allocator ----
if cc -O2 -g -shared -fPIC -o libbump.so "$P/libbump.c" 2>cc.err &&
	cc -O2 -g -o sized "$P/sized.c" -L. -lbump -Wl,-rpath,"$T" 2>>cc.err; then
	run sized ./sized
	ok $? "free_sized: the program's output and status as without us" || diag_file sized.err
	bad=$(sites sized.data alloc-bytes:churn_sized:1640000 live-bytes:churn_sized:0 \
		alloc-bytes:leak_sized:123456 live-bytes:leak_sized:123456)
	is "$bad" "" "free_sized and free_aligned_sized of the program's allocator: the blocks they free not live" ||
		diag_file sized.err
else
	diag_file cc.err
	skip "libbump.so does not build"
	skip "libbump.so does not build"
fi

# ---- mallocx, dallocx and free_sized looked for with weak references: the stand-ins ----
if cc -O2 -g -o weak "$P/weak.c" 2>cc.err; then
	run weak ./weak && grep -qx right weak.out
	ok $? "weak references to mallocx and free_sized: the program's blocks right, its output as without us" ||
		diag_file weak.err
	bad=$(sites weak.data alloc-bytes:leak_weak:400000 live-bytes:leak_weak:400000 \
		alloc-bytes:churn_weak:300000 live-bytes:churn_weak:0)
	is "$bad" "" "...its bytes the same as with malloc & co, none of what it freed live"
else
	skip "weak.c does not build"
	skip "weak.c does not build"
fi

# ---- an allocator the library cannot see: an arena of the program's own over mmap ----
cat >heap.c <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv)
{
	static char *keep[200000];
	size_t n = 0;

	if (argc > 1) { /* 96 MiB of small blocks, all but 1 in 50 freed: the heap keeps its pages */
		for (int i = 0; i < 200000; i++)
			memset(keep[i] = malloc(500), 1, 500);
		for (int i = 0; i < 200000; i++)
			if (i % 50)
				free(keep[i]);
	} else { /* 96 MiB held */
		for (int i = 0; i < 96; i++, n += 1 << 20)
			memset(keep[i] = malloc(1 << 20), 1, 1 << 20);
	}
	printf("%zu\n", n);
	return 0;
}
EOF
if cc -O2 -g -o arena "$P/arena.c" 2>cc.err && cc -O2 -g -o heap heap.c 2>>cc.err; then
	timeout -s KILL 60 "$B/autoprof" --memory -o arena.data -- ./arena >arena.out 2>arena.err
	is "$(cat arena.out) $(grep -c 'most of its memory comes from an allocator the library cannot see' arena.err)" \
		"100663296 bytes from the arena 1" \
		"a 96 MiB arena of the program's own over mmap: one line says most of its memory was not seen" ||
		diag_file arena.err
	"$B/autoprof-report" --leaks arena.data >arena.leaks 2>arena.rerr
	n=$(sed -n 's/^Not seen: \([0-9]*\) bytes of anonymous memory.*/\1/p' arena.leaks)
	grep -q 'did not come through malloc & co' arena.rerr &&
		[ -n "$n" ] && [ "$n" -ge 67108864 ] && [ "$n" -le 100663296 ]
	ok $? "...autoprof-report --leaks says the bytes not seen ($n), and warns" ||
		{ diag_file arena.leaks; diag_file arena.rerr; }
	timeout -s KILL 60 "$B/autoprof" --memory -o heap.data -- ./heap >heap.out 2>heap.err
	timeout -s KILL 60 "$B/autoprof" --memory -o frag.data -- ./heap frag >frag.out 2>frag.err
	"$B/autoprof-report" --leaks heap.data >heap.leaks 2>&1
	"$B/autoprof-report" --leaks frag.data >frag.leaks 2>&1
	is "$(cat heap.out frag.out | tr '\n' ' ')$(cat heap.err frag.err heap.leaks frag.leaks | grep -c 'cannot see')" \
		"100663296 0 0" "96 MiB from malloc, held or freed into a fragmented heap: no such line"
	# the same arena in a forked child (its counts start from zero at the fork: its
	# anonymous memory is read there too; the line was never said in a child)
	sed 's/^int main(void)$/int arena_main(void)/' "$P/arena.c" >arena_fork.c
	printf '%s\n' '#include <stdlib.h>' '#include <sys/wait.h>' '#include <unistd.h>' 'int arena_main(void);' \
		'int main(void) { free(malloc(10)); pid_t p = fork(); if (p == 0) return arena_main(); waitpid(p, 0, 0); return 0; }' \
		>>arena_fork.c
	if cc -O2 -g -o arena-fork arena_fork.c 2>cc2.err; then
		timeout -s KILL 60 "$B/autoprof" --memory -o af.data -- ./arena-fork >af.out 2>af.err
		is "$(cat af.out) $(grep -c 'most of its memory comes from an allocator the library cannot see' af.err)" \
			"100663296 bytes from the arena 1" \
			"the arena in a forked child: the line is said for the child" || diag_file af.err
	else
		skip "arena_fork.c does not build: $(head -1 cc2.err)"
	fi
else
	diag_file cc.err
	for i in 1 2 3 4; do skip "the arena programs do not build"; done
fi

done_testing
