#!/bin/sh
# memory.sh - the cost of native memory profiling (issue 25; doc/memory.md):
# CPU time (user + system) and peak RSS of allocation-heavy programs run
#   plain, under autoprof (CPU only), autoprof --memory (the default 512 KiB
#   interval), autoprof --memory --memory-interval 1 (every allocation),
#   heaptrack, and gperftools' heap profiler (LD_PRELOAD=libtcmalloc.so.4
#   HEAPPROFILE=...; Debian's libgoogle-perftools4),
# as a Markdown table. Programs: a C++ std::map<std::string,int> of 40,000
# keys filled and destroyed 40 times; a C program making many small mallocs
# on 4 threads; python3 building and dropping lists of dicts
# (PYTHONMALLOC=malloc, so that every object is a malloc; the interpreter's
# own executable is run, not a wrapper script such as pyenv's shim or env,
# so that heaptrack and gperftools profile python3 itself).
#
# Method: RUNS rounds; in each, every tool's run comes right after a plain
# run of the same program (interleaved pairs: a drift of the machine hits
# both), and a tool's figure is the median over the rounds of its ratio to
# the plain run of its pair. "x autoprof" divides by autoprof's (CPU only)
# median: what the memory profile adds to CPU sampling.
#
# A busy machine makes the numbers meaningless: the script refuses to start
# when the load average is above LOAD_MAX (default 0.3 per CPU), measures
# what other processes used meanwhile (/proc/stat minus our runs), and marks
# the table INVALID when that exceeds 0.25 CPU on average. FORCE=1 runs
# anyway (the table is then marked).
#
# gperftools is slow (30x on the C++ program, 500x on the small mallocs): by
# default it runs once per program on the C++ program and python3 only;
# GPERFTOOLS=0 leaves it out, GPERFTOOLS=all runs it RUNS times everywhere.
#
# QUICK=1 shrinks the programs to a smoke run of the script (no meaning).
#
#   sh scripts/bench/memory.sh [RUNS]    (default 5; run from the repository after make)
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=$ROOT/build
A=$B/autoprof
RUNS=${1:-5}
GPERFTOOLS=${GPERFTOOLS:-1}
FORCE=${FORCE:-0}
LOAD_MAX=${LOAD_MAX:-0.3}
TCMALLOC=$(ls /usr/lib/*/libtcmalloc.so.4 2>/dev/null | head -1)
W=$(mktemp -d /tmp/autoprof-memory-bench.XXXXXX)
trap 'rm -rf "$W"' EXIT
cd "$W" || exit 1
[ -x "$A" ] || { echo "memory.sh: build first (make)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "memory.sh: needs /usr/bin/time (Debian package time)" >&2; exit 1; }
PY=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null)
[ -x "$PY" ] || { echo "memory.sh: needs python3" >&2; exit 1; }

NCPU=$(nproc)
load=$(cut -d' ' -f1 /proc/loadavg)
if awk -v l="$load" -v n="$NCPU" -v m="$LOAD_MAX" 'BEGIN { exit !(l > n * m) }'; then
	if [ "$FORCE" != 1 ]; then
		echo "memory.sh: the machine is busy (load average $load on $NCPU CPUs, above $LOAD_MAX per CPU): timings would be noise; FORCE=1 runs anyway" >&2
		exit 2
	fi
	echo "memory.sh: the machine is busy (load average $load); running anyway (FORCE=1), the table is marked" >&2
fi

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
if [ "${QUICK:-0}" = 1 ]; then # a smoke run of the script itself: tiny programs, no meaning
	sed -i 's/r < 40;/r < 2;/' map.cpp
	sed -i 's/2000000/50000/' small.c
	sed -i 's/range(20)/range(1)/' alloc.py
fi
g++ -O2 -g -o map map.cpp || exit 1
cc -O2 -g -pthread -o small small.c || exit 1

# CPU seconds the whole machine has spent busy (all CPUs), from /proc/stat.
machine_busy() { awk '/^cpu / { printf "%.3f\n", ($2 + $3 + $4 + $7 + $8) / 100; exit }' /proc/stat; }

OWN=0 # CPU seconds of our own runs, to subtract from the machine's

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
	if timeout -s KILL 900 /usr/bin/time -o t.txt -f '%U %S %M' "$@" >out.txt 2>err.txt; then
		awk '{ printf "%.3f %d\n", $1 + $2, $3 }' t.txt
	else
		echo "- -"
	fi
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else print v[int((NR + 1) / 2)] }'; }

TOOLS="autoprof memory memory1"
command -v heaptrack >/dev/null && TOOLS="$TOOLS heaptrack"
[ -n "$TCMALLOC" ] && [ "$GPERFTOOLS" != 0 ] && TOOLS="$TOOLS gperftools"

busy0=$(machine_busy)
t0=$(date +%s.%N)
for prog in map small python; do
	case $prog in
	map) cmd="./map" ;;
	small) cmd="./small" ;;
	python) cmd="$PY alloc.py" ;;
	esac
	export PYTHONMALLOC=malloc # read by python3 only
	for i in $(seq "$RUNS"); do
		for tool in $TOOLS; do
			if [ $tool = gperftools ] && [ "$GPERFTOOLS" != all ]; then
				[ "$i" = 1 ] && [ $prog != small ] || continue
			fi
			# shellcheck disable=SC2086 # cmd is words on purpose
			set -- $(run plain $cmd)
			p_cpu=$1
			p_rss=$2
			# shellcheck disable=SC2086
			set -- $(run $tool $cmd)
			echo "$p_cpu $p_rss" >>"$prog.plain"
			echo "$1 $2 $p_cpu" >>"$prog.$tool"
		done
	done
	unset PYTHONMALLOC
done
t1=$(date +%s.%N)
busy1=$(machine_busy)
OWN=$(cat ./*.plain ./*.autoprof ./*.memory ./*.memory1 ./*.heaptrack ./*.gperftools 2>/dev/null |
	awk '$1 != "-" { s += $1 } END { printf "%.3f\n", s }')
foreign=$(awk -v b0="$busy0" -v b1="$busy1" -v o="$OWN" -v t0="$t0" -v t1="$t1" \
	'BEGIN { f = (b1 - b0 - o) / (t1 - t0); printf "%.2f\n", f < 0 ? 0 : f }')
valid=yes
awk -v f="$foreign" 'BEGIN { exit !(f > 0.25) }' && valid=no
awk -v l="$load" -v n="$NCPU" -v m="$LOAD_MAX" 'BEGIN { exit !(l > n * m) }' && valid=no

echo "memory.sh: $(date -u +%Y-%m-%dT%H:%MZ), $NCPU CPUs, load average $load at the start, other processes used $foreign CPUs on average meanwhile; $RUNS interleaved pairs; python: $PY"
[ $valid = yes ] || echo "**INVALID: the machine was busy (load average $load, other processes $foreign CPUs): these numbers are noise**"
echo
echo "| program | tool | CPU s (median) | x plain (median of pairs) | x autoprof | peak RSS MB | runs |"
echo "|---|---|---|---|---|---|---|"
for prog in map small python; do
	base=$(cut -d' ' -f1 "$prog.plain" | grep -v '^-' | median)
	rss=$(cut -d' ' -f2 "$prog.plain" | grep -v '^-' | median)
	echo "| $prog | plain | $base | 1.00 | | $(awk -v r="$rss" 'BEGIN { printf "%.0f", r / 1024 }') | $(wc -l <"$prog.plain") |"
	auto=
	for tool in $TOOLS; do
		f=$prog.$tool
		if [ ! -s "$f" ]; then
			echo "| $prog | $tool | not run | | | | 0 |"
			continue
		fi
		n=$(wc -l <"$f")
		failed=$(awk '$1 == "-"' "$f" | wc -l)
		cpu=$(awk '$1 != "-" { print $1 }' "$f" | median)
		ratio=$(awk '$1 != "-" && $3 != "-" && $3 > 0 { print $1 / $3 }' "$f" | median)
		rss=$(awk '$1 != "-" { print $2 }' "$f" | median)
		[ $tool = autoprof ] && auto=$cpu
		xa=$(awk -v c="$cpu" -v a="$auto" 'BEGIN { if (c == "-" || a == "" || a == "-" || a == 0) print ""; else printf "%.2f", c / a }')
		[ $tool = autoprof ] && xa=1.00
		r=$(awk -v x="$ratio" 'BEGIN { if (x == "-") print "-"; else printf "%.2f", x }')
		mb=$(awk -v r="$rss" 'BEGIN { if (r == "-") print "-"; else printf "%.0f", r / 1024 }')
		note=$n
		[ "$failed" -gt 0 ] && note="$n ($failed failed)"
		echo "| $prog | $tool | $cpu | $r | $xa | $mb | $note |"
	done
done
[ $valid = yes ] || exit 3
exit 0
