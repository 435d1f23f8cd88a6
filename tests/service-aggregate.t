#!/bin/sh
# AUTOPROF_AGGREGATE=1: a thread's samples with the same stack merge into one
# SAMPLE record whose period is their sum. perf report's shares (weighted by
# period) are those of the same run unaggregated: AUTOPROF_AGGREGATE_CHECK=1
# keeps every sample and writes the merged records as a second event of the
# same file, NAME-aggregated, so both come from the very same samples. The
# file of a CPU-bound program takes at most 10 bytes per sample; the merged
# samples reach the file at every ending (exit, a deadly signal, exec, the
# end of a thread), and perf script shows one line per merged record.
. "$(dirname "$0")/lib.sh"
needs "$B/progs/truth" "$B/progs/mtwork" "$B/progs/demo" "$B/progs/life"
plan 17

P=$B/progs

# shares FILE EVENT: "sym share" lines of EVENT in perf report --sort sym.
shares() {
	perf report -i "$1" --stdio --no-children --sort sym 2>/dev/null |
		awk -v ev="$2" '/^# Samples: .* of event / { on = ($0 ~ "event .'"$2"'.$") ; next }
			on && $1 ~ /%$/ { sub(/%/, "", $1); print $NF, $1 }' | sort
}

# maxdiff A B: the largest difference of a symbol's share between two shares lists.
maxdiff() {
	awk 'NR == FNR { a[$1] = $2; seen[$1] = 1; next } { b[$1] = $2; seen[$1] = 1 }
		END { m = 0; for (s in seen) { d = a[s] - b[s]; if (d < 0) d = -d; if (d > m) m = d }
			printf "%.2f\n", m }' "$1" "$2"
}

# 1-4: the same run, both streams: equal shares, fewer records, equal period sums.
for prog in "demo" "mtwork 1 3"; do
	name=${prog%% *}
	timeout -s KILL 120 env AUTOPROF_AGGREGATE_CHECK=1 AUTOPROF_OUTPUT=$name.data \
		LD_PRELOAD="$LIB" $P/$prog >/dev/null 2>$name.err
	shares $name.data cpu-clock >$name.raw
	ev=$(perf report -i $name.data --stdio --header-only 2>/dev/null |
		sed -n 's/^# event : name = \([^,]*-aggregated\),.*/\1/p' | head -1)
	base=${ev%-aggregated}
	shares $name.data "$base" >$name.raw
	shares $name.data "$ev" >$name.agg
	d=
	[ -s $name.raw ] && [ -s $name.agg ] && d=$(maxdiff $name.raw $name.agg)
	within "$d" 0 0.5 \
		"$name: perf report's shares of $ev and $base (the same samples) differ by at most 0.5 points" ||
		{ diag_file $name.raw; diag_file $name.agg; diag_file $name.err; }
	perf_script $name.data -F comm,period,event >$name.script
	raw_n=$(awk -v e="$base:" '$NF == e' $name.script | grep -c .)
	agg_n=$(awk -v e="$ev:" '$NF == e' $name.script | grep -c .)
	raw_p=$(awk -v e="$base:" '$NF == e { s += $(NF - 1) } END { print s + 0 }' $name.script)
	agg_p=$(awk -v e="$ev:" '$NF == e { s += $(NF - 1) } END { print s + 0 }' $name.script)
	[ "$agg_n" -gt 0 ] && [ "$agg_n" -lt "$raw_n" ]
	ok $? "$name: perf script shows fewer merged records ($agg_n) than samples ($raw_n)"
	is "$agg_p" "$raw_p" "$name: the merged records' periods add up to the samples' total"
done

# 7-9: the file of a CPU-bound program: at most 10 bytes per sample, read cleanly.
timeout -s KILL 120 env AUTOPROF_AGGREGATE=1 AUTOPROF_VERBOSE=1 AUTOPROF_OUTPUT=truth.data \
	LD_PRELOAD="$LIB" $P/truth all 3 >/dev/null 2>truth.err
n=$(sed -n 's/.*wrote \([0-9]*\) samples.*/\1/p' truth.err)
size=$(stat -c %s truth.data)
within "$(awk -v s="$size" -v n="$n" 'BEGIN { if (n > 0) printf "%.2f", s / n }')" 0.01 10 \
	"truth all 3: $size bytes for $n samples" || diag_file truth.err
perf report -i truth.data --stdio --no-children --sort sym >truth.rep 2>truth.rep.err
clean_stderr truth.rep.err
ok $? "perf report reads the aggregated file with nothing on stderr" || diag_file truth.rep.err
mul=$(perf_share truth.data part_mul)
within "$mul" 45 75 "truth: part_mul has its share (about 55%) in the aggregated file"

# 10-11: autoprof-report reads it, with the shares perf report shows.
"$REPORT" truth.data >ours.txt 2>ours.err
ok $? "autoprof-report reads the aggregated file" || diag_file ours.err
ours=$(awk '$3 == "part_mul" && $1 ~ /%$/ { sub(/%/, "", $1); print $1; exit }' ours.txt)
within "$(awk -v a="$ours" -v b="$mul" 'BEGIN { d = a - b; if (d < 0) d = -d; print d }')" 0 0.5 \
	"autoprof-report's part_mul ($ours) is perf report's ($mul) within 0.5 points" ||
	diag_file ours.txt

# 12-13: several threads: each thread's merged samples are in the file at its end.
timeout -s KILL 120 env AUTOPROF_AGGREGATE=1 AUTOPROF_OUTPUT=mt.data \
	LD_PRELOAD="$LIB" $P/mtwork 1 3 >/dev/null 2>mt.err
tids=$(perf_script mt.data -F tid | sort -u | grep -c .)
within "$tids" 3 4 "mtwork: the merged samples of its 3 worker threads are in the file"
perf_script mt.data -F tid,period >mt.script
awk '{ n[$1]++ } END { for (t in n) if (n[t] > 1) exit 0; exit 1 }' mt.script
ok $? "mtwork: perf script shows one line per merged record of a thread"

# 14-17: the endings that run the library's code write the merged samples.
for m in sigsegv _exit exec threadexit; do
	mkdir $m && cd $m
	timeout -s KILL 60 env AUTOPROF_QUIET=1 AUTOPROF_AGGREGATE=1 LD_PRELOAD="$LIB" \
		"$P/life" $m "$P" >/dev/null 2>&1
	sym=parent_work
	[ $m = threadexit ] && sym=child_work
	perf report -i perf.data --stdio --no-children --sort sym 2>/dev/null | grep -q "\] $sym\$"
	ok $? "$m: the merged samples of $sym before the end are in the file"
	cd ..
done
done_testing
