#!/bin/sh
# memory.sh - the cost of native memory profiling (issue 25; doc/memory.md):
# CPU time (user + system) and peak RSS of allocation-heavy programs run
#   plain, under autoprof (CPU only), autoprof --memory (the default 512 KiB
#   interval), autoprof --memory --memory-interval 1 (every allocation),
#   heaptrack, and gperftools' heap profiler (LD_PRELOAD=libtcmalloc.so.4
#   HEAPPROFILE=...; Debian's libgoogle-perftools4),
# each the median of RUNS runs, as a Markdown table with the ratio to plain.
# Programs: a C++ std::map<std::string,int> of 40,000 keys filled and
# destroyed 40 times; a C program making many small mallocs on 4 threads;
# python3 building and dropping lists of dicts (PYTHONMALLOC=malloc, so that
# every object is a malloc). Timings mean something on a quiet machine only.
#
#   sh scripts/bench/memory.sh [RUNS]    (default 5; run from the repository after make)
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=$ROOT/build
A=$B/autoprof
RUNS=${1:-5}
TCMALLOC=$(ls /usr/lib/*/libtcmalloc.so.4 2>/dev/null | head -1)
W=$(mktemp -d /tmp/autoprof-memory-bench.XXXXXX)
trap 'rm -rf "$W"' EXIT
cd "$W" || exit 1
[ -x "$A" ] || { echo "memory.sh: build first (make)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "memory.sh: needs /usr/bin/time (Debian package time)" >&2; exit 1; }

cat >map.cpp <<'SRC'
#include <cstdio>
#include <map>
#include <string>
int main()
{
	unsigned long sum = 0;
	for (int r = 0; r < 40; r++) {
		std::map<std::string, int> m;
		for (int i = 0; i < 40000; i++)
			m.emplace("key number " + std::to_string(i * 7919 % 40000), i);
		for (auto &kv : m)
			sum += (unsigned long)kv.second;
	}
	std::printf("%lu\n", sum);
	return 0;
}
SRC
cat >small.c <<'SRC'
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
static void *work(void *arg)
{
	unsigned long seed = (unsigned long)arg, sum = 0;
	void *live[256] = {0};
	for (int i = 0; i < 2000000; i++) {
		seed = seed * 6364136223846793005UL + 1442695040888963407UL;
		unsigned slot = (unsigned)(seed >> 56);
		free(live[slot]);
		live[slot] = malloc(16 + (seed >> 40) % 240);
		sum += (unsigned long)live[slot] & 1;
	}
	for (int i = 0; i < 256; i++)
		free(live[i]);
	return (void *)sum;
}
int main(void)
{
	pthread_t t[4];
	for (long i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, work, (void *)(i + 1));
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	puts("done");
	return 0;
}
SRC
cat >alloc.py <<'SRC'
total = 0
for r in range(20):
    rows = [{"id": i, "name": "row %d" % i, "tags": [i, i + 1, i + 2]} for i in range(50000)]
    total += sum(len(x["name"]) for x in rows)
print(total)
SRC
g++ -O2 -g -o map map.cpp || exit 1
cc -O2 -g -pthread -o small small.c || exit 1

# run TOOL PROG...: one run; prints "cpu_seconds max_rss_kb", or "- -" when it failed.
run() {
	tool=$1
	shift
	rm -f prof.data* heaptrack.* heap.prof*
	case $tool in
	plain) set -- "$@" ;;
	autoprof) set -- "$A" -q -o prof.data -- "$@" ;;
	memory) set -- "$A" -q --memory -o prof.data -- "$@" ;;
	memory1) set -- "$A" -q --memory --memory-interval 1 -o prof.data -- "$@" ;;
	heaptrack) set -- heaptrack -o heaptrack.out "$@" ;;
	gperftools) set -- env LD_PRELOAD="$TCMALLOC" HEAPPROFILE="$W/heap.prof" "$@" ;;
	esac
	if timeout -s KILL 600 /usr/bin/time -o t.txt -f '%U %S %M' "$@" >out.txt 2>err.txt; then
		awk '{ printf "%.3f %d\n", $1 + $2, $3 }' t.txt
	else
		echo "- -"
	fi
}

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR == 0 || v[1] == "-") print "-"; else print v[int((NR + 1) / 2)] }'; }

echo "| program | tool | CPU s (median of $RUNS) | x plain | peak RSS MB |"
echo "|---|---|---|---|---|"
for prog in map small python; do
	case $prog in
	map) cmd="./map" ;;
	small) cmd="./small" ;;
	python) cmd="env PYTHONMALLOC=malloc python3 alloc.py" ;;
	esac
	base=
	for tool in plain autoprof memory memory1 heaptrack gperftools; do
		case $tool in
		heaptrack) command -v heaptrack >/dev/null || { echo "| $prog | $tool | not installed | | |"; continue; } ;;
		gperftools) [ -n "$TCMALLOC" ] || { echo "| $prog | $tool | not installed | | |"; continue; } ;;
		esac
		: >cpu.txt
		: >rss.txt
		for i in $(seq "$RUNS"); do
			# shellcheck disable=SC2086 # cmd is words on purpose
			set -- $(run $tool $cmd)
			echo "$1" >>cpu.txt
			echo "$2" >>rss.txt
		done
		cpu=$(median <cpu.txt)
		rss=$(median <rss.txt)
		[ $tool = plain ] && base=$cpu
		ratio=$(awk -v c="$cpu" -v b="$base" 'BEGIN { if (c == "-" || b == "" || b == "-" || b == 0) print "-"; else printf "%.2f", c / b }')
		mb=$(awk -v r="$rss" 'BEGIN { if (r == "-") print "-"; else printf "%.0f", r / 1024 }')
		echo "| $prog | $tool | $cpu | $ratio | $mb |"
	done
done
