#!/bin/sh
# onefile-stress.sh [RUNS] - one run, one file, repeated (default 20 runs; for a
# quiet machine, not part of make check): a process tree of forks, execs and a
# shell that execs its program, under the launcher, each run checked for one
# file whose samples (perf script) equal the sum the closing lines list for
# its images, read by hotspot's parser without a time-order violation.
# Prints one line per failed run and a summary; exits 1 if any failed.
# Run from the repository root after `make all build/progs/split`.
B=$(pwd)/build
P=$B/progs
PERFPARSER=/usr/lib/x86_64-linux-gnu/libexec/hotspot-perfparser
runs=${1:-20}
T=$(mktemp -d /tmp/onefile-stress.XXXXXX)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
mkdir bin
cat >bin/split <<EOF
#!/bin/sh
i=0; while [ \$i -lt 20000 ]; do i=\$((i + 1)); done
"$P/split" 50 >/dev/null &
exec "$P/split" "\$@"
EOF
chmod +x bin/split
bad=0
i=0
while [ $i -lt "$runs" ]; do
	i=$((i + 1))
	rm -f r.data*
	PATH=$T/bin:$PATH timeout -s KILL 60 "$B/autoprof" -o r.data -- \
		sh -c "split 150 >/dev/null & split 100 >/dev/null; wait" >/dev/null 2>r.err
	files=$(ls r.data* | grep -vc '\.stat$')
	n=$(perf script -i r.data -F time 2>/dev/null | grep -c .)
	sum=$(awk '/^autoprof:     pid/ { s += $4 } END { print s + 0 }' r.err)
	viol=0
	if [ -x "$PERFPARSER" ]; then
		viol=$("$PERFPARSER" --input r.data --print-stats 2>&1 |
			awk '/time violations:/ { v += $NF } END { print v + 0 }')
	fi
	if [ "$files" != 1 ] || [ "$n" != "$sum" ] || [ "$n" = 0 ] || [ "$viol" != 0 ]; then
		bad=$((bad + 1))
		echo "run $i: $files files, $n samples in perf script, $sum listed, $viol time violations"
		sed 's/^/  /' r.err
	fi
done
echo "onefile-stress: $((runs - bad)) of $runs runs wrote one complete file"
[ $bad = 0 ]
