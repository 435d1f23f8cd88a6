#!/bin/sh
# The fallback source: per-thread POSIX CPU-time timers where perf_event_open
# is refused (tests/progs/noperf refuses it with a seccomp filter, as Docker
# does), or when AUTOPROF_MODE=timer asks for it. Samples carry their true
# period, so times are right even though the tick limits the rate.
. "$(dirname "$0")/lib.sh"
plan 13

NOPERF=$B/progs/noperf
# The reference (below) is measured just before and just after the run: the
# tick rate a CPU-time timer gets moves with the machine's load (129-226/s in
# one parallel make check), and the bounds take in both, with a margin that
# still keeps the 1000 Hz (1 ms) asked far outside them.
rate0=$("$B/progs/tickrate" 1000)
"$NOPERF" env LD_PRELOAD="$LIB" "$B/progs/split" 1000 >out.txt 2>err.txt
is "$?" 0 "perf_event_open refused: the program runs and exits 0"
rate1=$("$B/progs/tickrate" 1000)
is "$(cat out.txt)" "split: done" "its output is unchanged"
grep -q 'perf_event_open is refused here.*CPU-time timers' err.txt && [ "$(wc -l <err.txt)" = 1 ]
ok $? "one line says the timers stand in" || diag_file err.txt
perf report -i perf.data --stdio --no-children --sort sym >rep.txt 2>rep.err
clean_stderr rep.err
ok $? "perf report reads the timer file without a warning" || diag_file rep.err
n=$(nsamples perf.data)
# About 2/3, within four standard deviations of a share estimated from n samples.
tol=$(awk -v n="$n" 'BEGIN { printf "%.1f", 4 * 100 * sqrt(2 / 9 / (n > 0 ? n : 1)) + 2 }')
within "$(perf_share perf.data heavy_two_thirds)" "$(awk -v t="$tol" 'BEGIN { print 66.7 - t }')" \
	"$(awk -v t="$tol" 'BEGIN { print 66.7 + t }')" "heavy_two_thirds still has about 2/3"

# CPU-time timers fire on the kernel's tick: the reference is what a plain
# program's own 1 kHz CPU-time timer gets here, per CPU-second.
lo=$((rate0 < rate1 ? rate0 : rate1))
hi=$((rate0 > rate1 ? rate0 : rate1))
rate="$rate0-$rate1"
within "$n" "$(awk -v r="$lo" 'BEGIN { print int(r * 0.6) }')" \
	"$(awk -v r="$hi" 'BEGIN { print int(r * 1.6 + 5) }')" \
	"the rate delivered is the timer's here ($rate/s), not the 1000 Hz asked ($n samples in 1 s)"
# Event count (approx.) is the sum of the periods: about 1 s of CPU, in ns.
sum=$(sed -n 's/^# Event count (approx.): //p' rep.txt | head -1)
within "$sum" 850000000 1150000000 "the periods add up to the CPU time used (true periods, not the asked one)"
period=$(perf report -i perf.data --header-only 2>/dev/null | sed -n 's/.*name = cpu-clock.*sample_period, sample_freq } = \([0-9]*\).*/\1/p')
within "$period" "$(awk -v r="$hi" 'BEGIN { print int(1e9 / r * 0.6) }')" \
	"$(awk -v r="$lo" 'BEGIN { print int(1e9 / r * 1.6) }')" \
	"the file's attr says the delivered period ($period ns), not the asked 1 ms"

AUTOPROF_QUIET=1 AUTOPROF_MODE=timer AUTOPROF_OUTPUT=threads.data LD_PRELOAD=$LIB "$B/progs/threads" 400 >/dev/null
bad=
for i in 0 1 2 3; do
	c=$(perf report -i threads.data --stdio --no-children --sort comm 2>/dev/null |
		awk -v c="busy-$i" '$2 == c { sub(/%/, "", $1); print $1 }')
	awk -v v="$c" 'BEGIN { exit !(v >= 18 && v <= 32) }' || bad="$bad busy-$i:$c"
done
is "$bad" "" "AUTOPROF_MODE=timer: four threads get a quarter each"
"$PERFPARSER" --input threads.data --print-stats >parser.txt 2>&1
is "$(awk '/^samples time violations:/ { print $4 }' parser.txt)" 0 "hotspot-perfparser reads the timer file"

"$NOPERF" env AUTOPROF_MODE=perf AUTOPROF_OUTPUT=perf-only.data LD_PRELOAD="$LIB" "$B/progs/split" 50 >out.txt 2>err.txt
is "$?:$(cat out.txt)" "0:split: done" "AUTOPROF_MODE=perf where perf is refused: the program runs normally"
grep -q 'cannot open a .* sampling event: Permission denied; not profiling' err.txt && [ ! -e perf-only.data ]
ok $? "with one line saying why, and no file" || diag_file err.txt

# Paused timers stay paused when sampling moves to another signal: the move
# gives each thread a new timer, which was armed whatever the old one was
# (execfam sigflip, AUTOPROF_START=0: samples in 1 run of 3 to 8 before).
bad=0
for i in $(seq 10); do
	rm -f paused.data*
	timeout -s KILL 60 env AUTOPROF_MODE=timer AUTOPROF_START=0 AUTOPROF_OUTPUT=paused.data \
		LD_PRELOAD="$LIB" "$B/progs/execfam" sigflip >/dev/null 2>&1
	n=$(perf script -i paused.data -F ip 2>/dev/null | grep -c .)
	[ "$n" = 0 ] || bad=$((bad + 1))
done
is "$bad" 0 "AUTOPROF_START=0 with timers, sampling moved twice: no sample in 10 runs"
done_testing
