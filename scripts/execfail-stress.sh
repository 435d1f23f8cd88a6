#!/bin/sh
# execfail-stress.sh [RUNS] - execs from a signal handler, repeated (default 20
# runs of each case; for a quiet machine, not part of make check): sigheap's
# failing execve in every 2 ms tick while the program (one thread, or three)
# churns malloc/realloc/free, and an execve of /bin/true from a tick, with
# --memory, CPU-only and with kernel samples (-k); each run checked for the
# program's own status and output, no line of ours on stderr, and a file that
# perf script reads without a word. Prints one line per failed run and a
# summary; exits 1 if any failed.
# Run from the repository root after `make all build/progs/sigheap`.
B=$(pwd)/build
P=$B/progs/sigheap
runs=${1:-20}
T=$(mktemp -d /tmp/execfail-stress.XXXXXX)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
bad=0 total=0
for opts in "--memory" "" "-k --memory"; do
	for mode in execmiss execmissmt exec execmt; do
		want=$(timeout -s KILL 30 "$P" $mode 200 2>/dev/null; echo "status $?")
		i=0
		while [ $i -lt "$runs" ]; do
			i=$((i + 1))
			total=$((total + 1))
			rm -f out.data*
			got=$(timeout -s KILL 30 "$B/autoprof" -q $opts -o out.data -- "$P" $mode 200 \
				2>run.err; echo "status $?")
			timeout -s KILL 30 perf script -i out.data >/dev/null 2>script.err
			if [ "$got" != "$want" ] || [ -s run.err ] || [ -s script.err ]; then
				bad=$((bad + 1))
				echo "FAIL $mode ${opts:-cpu} run $i: $(echo "$got" | tr '\n' ' ')" \
					"$(head -c 300 run.err script.err | tr '\n' ' ')"
			fi
		done
	done
done
echo "execfail-stress: $bad of $total runs failed"
[ $bad = 0 ]
