#!/bin/sh
# C++ programs linked with jemalloc or tcmalloc (shared, before libstdc++):
# their operator new and delete are the allocator's own and never call
# malloc, so the memory library interposes every form of them too
# (preload/memlib/cxx.c). tests/progs/memcxxalloc.cpp leaks known bytes at
# known sites with new[], malloc, aligned new and nothrow new, allocates
# and deletes with every form in churn(), and catches std::bad_alloc from a
# huge new. Built with glibc's allocator, tcmalloc, tcmalloc_minimal and
# jemalloc: at AUTOPROF_MEMORY_INTERVAL=1 every site's bytes are exact,
# allocated and live, each at new's caller; the program's output and exit
# status are its own; perf report reads each file. Then the launcher's
# --memory, and a C program that dlopens (RTLD_LOCAL) a C++ module linked
# with tcmalloc.
. "$(dirname "$0")/lib.sh"
needs "$LIB" "$B/libautoprof-memory.so" "$B/autoprof" "$B/autoprof-report"
if ! command -v g++ >/dev/null 2>&1; then
	echo "1..0 # SKIP no g++"
	exit 0
fi
plan 15

. "$ROOT/tests/memlib.sh" # bytes, at, MEMPRELOAD

# profile OUT ARGS...: run ARGS under both libraries with memory profiling, every byte sampled.
profile() {
	_out=$1
	shift
	# `profile OUT env VAR=VALUE... PROG`: the assignments go to the outer env, so that PROG is
	# the first image (a preloaded env may take a CPU sample on a loaded machine, and keep the
	# file's name)
	[ "$1" = env ] && shift
	timeout -s KILL 60 env AUTOPROF_MEMORY=1 AUTOPROF_MEMORY_INTERVAL=1 AUTOPROF_OUTPUT="$_out" \
		LD_PRELOAD="$MEMPRELOAD" "$@"
}

# sites FILE: what is wrong with FILE's bytes per site (empty: all exact). churn allocates
# 8 + 400 + 4096 + 3 x 4096 + 50 + 4096 + 320 + 512 bytes 1000 times, frees them all (the
# aligned sizes multiples of their alignment: libstdc++'s rounds them up for aligned_alloc).
sites() {
	_bad=""
	for _want in leak_new:67108864 leak_malloc:8388608 leak_aligned:65536 leak_nothrow:1000000; do
		_s=${_want%:*} _n=${_want#*:}
		[ "$(at "$1" alloc-bytes "$_s")" = "$_n" ] || _bad="$_bad alloc-$_s:$(at "$1" alloc-bytes "$_s")"
		[ "$(at "$1" live-bytes "$_s")" = "$_n" ] || _bad="$_bad live-$_s:$(at "$1" live-bytes "$_s")"
	done
	[ "$(at "$1" alloc-bytes churn)" = 21770000 ] || _bad="$_bad alloc-churn:$(at "$1" alloc-bytes churn)"
	[ "$(at "$1" live-bytes churn)" = 0 ] || _bad="$_bad live-churn:$(at "$1" live-bytes churn)"
	echo "$_bad"
}

for alloc in glibc tcmalloc.so.4 tcmalloc_minimal.so.4 jemalloc.so.2; do
	lib=
	if [ $alloc != glibc ]; then
		lib=$(ls /usr/lib/*/lib$alloc 2>/dev/null | head -1)
		if [ -z "$lib" ]; then
			for i in 1 2 3; do skip "lib$alloc is not installed (scripts/install-deps.sh test)"; done
			continue
		fi
	fi
	# the allocator first, as -ltcmalloc on a g++ line puts it: before libstdc++
	if ! g++ -O2 -g -o "cxx-$alloc" "$ROOT/tests/progs/memcxxalloc.cpp" $lib 2>cc.err; then
		for i in 1 2 3; do ok 1 "memcxxalloc linked with $alloc builds"; done
		diag_file cc.err
		continue
	fi
	timeout -s KILL 60 "./cxx-$alloc" >"plain-$alloc.out" 2>/dev/null
	echo $? >>"plain-$alloc.out"
	profile "$alloc.data" "./cxx-$alloc" >"$alloc.out" 2>"$alloc.err"
	echo $? >>"$alloc.out"
	cmp -s "plain-$alloc.out" "$alloc.out" && grep -qx 'bad_alloc caught' "$alloc.out" &&
		[ "$(tail -1 "$alloc.out")" = 3 ]
	ok $? "$alloc: the program's output (std::bad_alloc caught) and exit status 3 as without us" ||
		{ diag_file "$alloc.out"; diag_file "$alloc.err"; }
	bad=$(sites "$alloc.data")
	if [ $alloc != glibc ] && ! ldd "./cxx-$alloc" | grep -q "lib$alloc"; then
		bad="$bad not-linked"
	fi
	[ -z "$bad" ]
	ok $? "$alloc: every site's bytes exact (new[], malloc, aligned, nothrow leaked; every form deleted), at new's caller" ||
		{ diag "$bad"; diag_file "$alloc.err"; }
	perf report -i "$alloc.data" --stdio --no-children -g none --sort sym >"$alloc.perf" 2>"$alloc.perf.err" &&
		grep -q "of event 'live-bytes'" "$alloc.perf" && grep -q leak_aligned "$alloc.perf"
	ok $? "$alloc: perf report reads the file" || diag_file "$alloc.perf.err"
done

# ---- the launcher's --memory, as a user runs it ----
if [ -x cxx-tcmalloc.so.4 ]; then
	timeout -s KILL 60 "$B/autoprof" -q --memory --memory-interval 1 -o launch.data -- ./cxx-tcmalloc.so.4 \
		>launch.out 2>launch.err
	echo $? >>launch.out
	timeout -s KILL 60 "$B/autoprof-report" --leaks launch.data >launch.leaks 2>&1
	cmp -s plain-tcmalloc.so.4.out launch.out && [ -z "$(sites launch.data)" ] &&
		grep -q '^(live-bytes: 76567104 bytes' launch.leaks
	ok $? "autoprof --memory on the tcmalloc build: same output, every site exact, --leaks totals 76567104" ||
		{ diag "$(sites launch.data)"; diag_file launch.leaks; diag_file launch.err; }
else
	skip "no tcmalloc build"
fi

# ---- one frame: the one frame is new's caller ----
if [ -x cxx-jemalloc.so.2 ]; then
	profile depth1.data env AUTOPROF_STACK_DEPTH=1 ./cxx-jemalloc.so.2 >/dev/null 2>depth1.err
	is "$(at depth1.data live-bytes leak_new) $(at depth1.data live-bytes leak_aligned)" "67108864 65536" \
		"jemalloc, AUTOPROF_STACK_DEPTH=1: the one frame is new's caller"
else
	skip "no jemalloc build"
fi

# ---- a C program dlopens a C++ module linked with tcmalloc (RTLD_LOCAL) ----
lib=$(ls /usr/lib/*/libtcmalloc_minimal.so.4 2>/dev/null | head -1)
cat >mod.cc <<'EOF'
#include <cstring>
extern "C" __attribute__((noinline)) void *mod_leak(void)
{
	char *p = new char[3000000], *q = new char[100];

	memset(p, 1, 3000000);
	__asm__ volatile("" : : "r"(q) : "memory"); // no new/delete pair elided
	delete[] q;
	return p;
}
EOF
cat >host.c <<'EOF'
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv)
{
	void *h = dlopen(argc > 1 ? argv[1] : "", RTLD_NOW | RTLD_LOCAL);
	void *(*f)(void) = h ? (void *(*)(void))dlsym(h, "mod_leak") : NULL;

	printf("%s\n", f && f() ? "leaked" : dlerror());
	return 0;
}
EOF
if [ -n "$lib" ] && g++ -O2 -g -shared -fPIC -o libmodtc.so mod.cc "$lib" 2>cc.err &&
	cc -O2 -g -o host host.c 2>>cc.err; then
	profile mod.data ./host ./libmodtc.so >mod.out 2>mod.err
	is "$(cat mod.out) $(at mod.data live-bytes mod_leak) $(at mod.data alloc-bytes mod_leak)" \
		"leaked 3000000 3000100" \
		"a module dlopened RTLD_LOCAL with tcmalloc's new: its new and delete counted at its code"
else
	skip "libtcmalloc_minimal.so.4 not installed, or the module does not build"
fi

done_testing
