#!/bin/sh
# start..stop bounds every event: with AUTOPROF_START=0, `autoprof ctl PID
# start`, then `stop`, the file holds nothing from before the start or after
# the stop: CPU samples, off-CPU waits (a wait across an edge counts its part
# inside only) and the counters (they count while sampling is on, and their
# elapsed time is the time it was on). A window's file (AUTOPROF_WINDOW)
# holds no wait longer than the window.
. "$(dirname "$0")/lib.sh"
needs "$B/progs/service" "$B/progs/offcpu70" "$B/autoprof"
plan 15

A=$B/autoprof
SVC=$B/progs/service
DIR=$(ctl_dir)

# reply_ns PID KEY: a field of the last answer to `autoprof ctl PID` (ns).
reply_ns() { sed -n "s/^$2 //p" "$DIR/$1.reply"; }
# on_between PID WAIT ON: once PID answers, wait WAIT s, then start it for ON s
# and stop it; t0 and t1 are the start's and the stop's times (ns, its replies).
on_between() {
	until_ok "$A" ctl "$1" status
	sleep "$2"
	"$A" ctl "$1" start >/dev/null 2>&1
	t0=$(reply_ns "$1" since)
	sleep "$3"
	"$A" ctl "$1" stop >/dev/null 2>&1
	t1=$(reply_ns "$1" since)
}
# counter FILE NAME: a counter's value as autoprof-report prints it.
counter() { "$REPORT" "$1" 2>/dev/null | awk -v n="$2" '$0 ~ /^Counters:/ { on = 1 } on && $0 ~ " " n " " { print $1; exit }'; }
elapsed() { "$REPORT" "$1" 2>/dev/null | awk '/seconds time elapsed/ { print $1; exit }'; }

# The service: two workers spin 1 s then wait; a clock thread sleeps 3 s; main
# reads a pipe for 3 s. Started at 0.5 s, stopped at 1.5 s.
AUTOPROF_START=0 AUTOPROF_OFFCPU=1 AUTOPROF_COUNTERS=task-clock AUTOPROF_QUIET=1 \
	AUTOPROF_OUTPUT=s.data LD_PRELOAD=$LIB "$SVC" 2 1 3 >s.out 2>s.err &
pid=$!
on_between $pid 0.4 1
wait $pid
is "$?" 0 "the service ends normally"
diag "started at $t0 ns, stopped at $t1 ns"
perf_script s.data -F tid,event,time,period >s.txt
awk '$4 ~ /^offcpu-time/ { n++ } END { exit !(n >= 2) }' s.txt
ok $? "off-CPU waits between start and stop are recorded (main's read, the clock's sleep)" ||
	diag_file s.txt
# perf script prints tid, time (s, 6 decimals: 1 us of rounding), period, event.
check_times() {
	awk -v ev="$1" -v t0="$t0" -v t1="$t1" '$4 ~ "^" ev {
		t = $2; sub(/:$/, "", t); ns = t * 1e9
		if (ns < t0 - 1000 || ns > t1 + 1000) { print "outside: " $0; bad++ }
		if (ev == "offcpu-time" && ns + $3 > t1 + 1000) { print "ends after stop: " $0; bad++ }
	} END { exit bad > 0 }' s.txt
}
check_times offcpu-time >bad-off.txt
ok $? "every off-CPU wait lies between start and stop" || diag_file bad-off.txt
check_times cpu-clock >bad-cpu.txt
ok $? "every CPU sample lies between start and stop" || diag_file bad-cpu.txt
awk -v t0="$t0" -v t1="$t1" '$4 ~ /^offcpu-time/ { w[$1] += $3 }
	END { for (t in w) if (w[t] > t1 - t0 + 1000) { print t, w[t]; bad++ } exit bad > 0 }' s.txt >bad-sum.txt
ok $? "no thread waited longer than sampling was on" || diag_file bad-sum.txt

# The counters: elapsed is the time sampling was on, task-clock at most that on 2 threads.
e=$(elapsed s.data)
on=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", (b - a) / 1e9 }')
within "$e" "$(awk -v o="$on" 'BEGIN { print o - 0.005 }')" "$(awk -v o="$on" 'BEGIN { print o + 0.005 }')" \
	"the counters' elapsed time is the time sampling was on ($on s)"
tc=$(counter s.data task-clock)
within "$tc" 0 "$(awk -v o="$on" 'BEGIN { print o * 2000 + 5 }')" \
	"task-clock counts the workers while on only (msec, at most 2 threads x $on s)"

# Never started: nothing counted at all, in library mode and under the launcher.
AUTOPROF_START=0 AUTOPROF_COUNTERS=task-clock AUTOPROF_QUIET=1 AUTOPROF_OUTPUT=n.data \
	LD_PRELOAD=$LIB timeout -s KILL 30 "$SVC" 1 0.5 1 >/dev/null 2>&1
is "$(counter n.data task-clock)" 0.00 "never started (AUTOPROF_START=0): task-clock counts nothing"
timeout -s KILL 30 "$A" --start-paused -q -o l.data -- "$SVC" 1 0.5 1 >/dev/null 2>&1
is "$(counter l.data task-clock)" 0.00 "never started (--start-paused): task-clock counts nothing"

# Stopped, then an exec: the next image keeps the counters stopped, and their
# elapsed time stays the time sampling was on (the shell's 0.5 s, not the 2 s run).
mkfifo go
AUTOPROF_COUNTERS=task-clock AUTOPROF_QUIET=1 AUTOPROF_OUTPUT=x.data LD_PRELOAD=$LIB \
	sh -c "read x <go; exec $SVC 1 0.3 0.6" >/dev/null 2>&1 &
pid=$!
until_ok "$A" ctl $pid status
sleep 0.4
"$A" ctl $pid stop >/dev/null 2>&1
sleep 1
echo go >go
wait $pid
within "$(elapsed x.data)" 0.01 0.9 "stopped before an exec: the counters' elapsed time leaves the stop and the next image out"
within "$(counter x.data task-clock)" 0 50 "... and the next image's 300 ms of work is not counted (msec: the shell's start only)"

# From outside (--outside): the same for the counters.
timeout -s KILL 30 "$A" --outside --start-paused -q -o on.data -- "$SVC" 1 0.5 1 >/dev/null 2>&1
is "$(counter on.data task-clock)" 0.00 "never started, from outside: task-clock counts nothing"
"$A" --outside --start-paused -q -o os.data -- "$SVC" 2 1.5 2.5 >/dev/null 2>&1 &
L=$!
on_between $L 0.3 0.5
wait $L
on=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", (b - a) / 1e9 }')
within "$(elapsed os.data)" "$(awk -v o="$on" 'BEGIN { print o - 0.005 }')" "$(awk -v o="$on" 'BEGIN { print o + 0.005 }')" \
	"from outside: the counters' elapsed time is the time sampling was on ($on s)"

# A wait across a start: its part after the start only.
AUTOPROF_START=0 AUTOPROF_OFFCPU=1 AUTOPROF_QUIET=1 AUTOPROF_OUTPUT=w.data \
	LD_PRELOAD=$LIB "$SVC" 1 0.1 2 >/dev/null 2>&1 &
pid=$!
until_ok "$A" ctl $pid status
sleep 0.5
"$A" ctl $pid start >/dev/null 2>&1
t0=$(reply_ns $pid since)
wait $pid
perf_script w.data -F tid,event,time,period >w.txt
awk -v t0="$t0" '$4 ~ /^offcpu-time/ { t = $2; sub(/:$/, "", t); if (t * 1e9 < t0 - 1000) bad++; n++ }
	END { exit !(n >= 1 && !bad) }' w.txt
ok $? "a wait that began before the start is counted from the start" || diag_file w.txt

# Windows: a 1.5 s wait ending in a busy stretch: no window's file holds more
# of it than the window is long.
timeout -s KILL 30 env AUTOPROF_OFFCPU=1 AUTOPROF_WINDOW=1s AUTOPROF_QUIET=1 AUTOPROF_OUTPUT=win.data \
	LD_PRELOAD=$LIB "$SVC" 1 0.3 1.8 >/dev/null 2>&1
bad=0 n=0
for f in win.data.2*; do
	case $f in *.stat) continue ;; esac
	n=$((n + 1))
	perf_script "$f" -F tid,event,period | awk '$3 ~ /^offcpu-time/ { w[$1] += $2 }
		END { for (t in w) if (w[t] > 1.001e9) { print t, w[t]; bad++ } exit bad > 0 }' >>win-bad.txt ||
		bad=$((bad + 1))
done
[ $n -ge 1 ] && [ $bad = 0 ]
ok $? "no window's file holds more wait per thread than the window's length ($n files)" ||
	diag_file win-bad.txt
done_testing
