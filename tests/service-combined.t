#!/bin/sh
# Windows and aggregation together: each window's file holds that window's
# merged records (a window's end emits every thread's table into the file
# that ends), so in every window file the aggregated event's total period
# equals the raw event's (AUTOPROF_AGGREGATE_CHECK writes both streams of
# the same run), and autoprof ctl dump leaves them complete too.
. "$(dirname "$0")/lib.sh"
needs "$B/progs/service" "$B/autoprof" "$REPORT"
plan 5

sums() { # FILE: "raw aggregated" total periods
	perf script -i "$1" -F event,period 2>/dev/null |
		awk '{ gsub(":", "", $2); s[$2] += $1 }
			END { printf "%d %d\n", s["cpu-clock"], s["cpu-clock-aggregated"] }'
}

AUTOPROF_EVENT=cpu-clock AUTOPROF_WINDOW=500ms AUTOPROF_AGGREGATE=1 AUTOPROF_AGGREGATE_CHECK=1 \
	AUTOPROF_QUIET=1 LD_PRELOAD=$LIB "$B/progs/service" 2 2.7 3 >out.txt 2>err.txt
is "$(cat out.txt)" "service: done, 0 interrupted calls" "the service runs as without us"
n=0
bad=0
for f in $(ls perf.data.* | grep -v '\.stat$'); do
	s=$(sums "$f")
	n=$((n + 1))
	set -- $s
	[ "$1" -gt 0 ] && [ "$1" = "$2" ] || {
		bad=$((bad + 1))
		diag "$f: raw $1, aggregated $2"
	}
done
[ "$n" -ge 3 ]
ok $? "several window files ($n)"
is "$bad" 0 "in every window file the merged records' period equals the raw samples'"

# ctl dump of a paused-then-started service with aggregation: the file is complete.
rm -f perf.data*
AUTOPROF_EVENT=cpu-clock AUTOPROF_AGGREGATE=1 AUTOPROF_AGGREGATE_CHECK=1 AUTOPROF_QUIET=1 \
	LD_PRELOAD=$LIB "$B/progs/service" 2 4 3 >out.txt 2>err.txt &
pid=$!
sleep 1.5
"$B/autoprof" ctl "$pid" dump >dump.txt 2>&1
ok $? "autoprof ctl dump answers" || diag_file dump.txt
cp perf.data dumped.data
wait "$pid"
set -- $(sums dumped.data)
[ "$1" -gt 0 ] && [ "$1" = "$2" ]
ok $? "after ctl dump the file holds every merged record (raw $1, aggregated $2)"

done_testing
