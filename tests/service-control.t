#!/bin/sh
# Control of a running process: AUTOPROF_START=0 starts paused, and
# `autoprof ctl PID start|stop|dump|status` acts on it, in perf and timer
# mode, in forked children, and says in one line what is wrong otherwise.
. "$(dirname "$0")/lib.sh"
needs "$B/progs/service" "$B/autoprof"
plan 44

A=$B/autoprof
SVC=$B/progs/service

# wait_for PID: until the process has published its endpoint (at most 5 s).
wait_for() {
	for _i in $(seq 50); do
		"$A" ctl "$1" status >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}
# (Every service here ends by itself after its TOTAL_S seconds: nothing to time out.)
field() { sed -n "s/^$1: \([0-9]*\).*/\1/p" "$2"; }

for mode in perf timer; do
	# Paused from the start: nothing is sampled until `start`.
	AUTOPROF_MODE=$mode AUTOPROF_START=0 AUTOPROF_QUIET=1 AUTOPROF_OUTPUT=$mode.data \
		LD_PRELOAD=$LIB "$SVC" 2 2.5 4 >$mode.out 2>$mode.err &
	pid=$!
	wait_for $pid
	ok $? "$mode: the paused process answers status"
	"$A" ctl $pid status >st0.txt 2>&1
	grep -q "^pid $pid: sampling off since" st0.txt && grep -q "^samples: 0 (0 lost)" st0.txt &&
		grep -q "^file: $T/$mode.data\$" st0.txt
	ok $? "$mode: status says off, 0 samples, and the file" || diag_file st0.txt
	"$A" ctl $pid start >start.txt 2>&1
	grep -q "^pid $pid: sampling started; file $T/$mode.data" start.txt
	ok $? "$mode: start says it started" || diag_file start.txt
	sleep 1
	"$A" ctl $pid dump >dump.txt 2>&1
	ok $? "$mode: dump answers" || diag_file dump.txt
	perf report -i $mode.data --stdio --no-children --sort sym >rep.txt 2>rep.err
	share=$(awk '$1 ~ /%$/ && $NF == "busy_loop" { sub(/%/, "", $1); print $1; exit }' rep.txt)
	within "$share" 80 100 "$mode: perf report reads the dump of the running process: busy_loop"
	# Wait until the workers block (their last samples are in their buffers), then stop:
	# every thread's buffer reaches the file, so the file has every sample status counts.
	sleep 2
	"$A" ctl $pid stop >stop.txt 2>&1
	grep -q "^pid $pid: sampling stopped" stop.txt
	ok $? "$mode: stop says it stopped" || diag_file stop.txt
	"$A" ctl $pid status >st1.txt 2>&1
	n_status=$(field samples st1.txt)
	n_file=$(nsamples $mode.data)
	is "$n_file" "$n_status" "$mode: after stop, the file holds every sample counted ($n_status)"
	within "$n_status" 1 1000000 "$mode: samples were taken while started"
	grep -q "^pid $pid: sampling off since" st1.txt
	ok $? "$mode: status says off again" || diag_file st1.txt
	wait $pid
	is "$?" 0 "$mode: the service ends normally"
	is "$(cat $mode.out)" "service: done, 0 interrupted calls" "$mode: no call of the program saw EINTR"
	"$A" ctl $pid status >gone.txt 2>&1
	rc=$?
	[ $rc = 1 ] && [ "$(wc -l <gone.txt)" = 1 ] && grep -q "no process $pid" gone.txt
	ok $? "$mode: after the exit, one line says there is no such process" || diag_file gone.txt
done

# The launcher's --start-paused: nothing is sampled unless ctl says so.
"$A" --start-paused -q -o paused.data -- "$SVC" 1 0.5 0.6 >/dev/null 2>&1
is "$(nsamples paused.data)" 0 "autoprof --start-paused: a run never started has no sample"

# A stop takes effect: no sample is taken while stopped, though the workers spin.
AUTOPROF_QUIET=1 AUTOPROF_OUTPUT=stop.data LD_PRELOAD=$LIB "$SVC" 2 4 4.5 >/dev/null 2>&1 &
pid=$!
wait_for $pid
"$A" ctl $pid stop >/dev/null 2>&1
"$A" ctl $pid status >a.txt 2>&1
sleep 1
"$A" ctl $pid status >b.txt 2>&1
is "$(field samples b.txt)" "$(field samples a.txt)" "no sample is counted while stopped"
"$A" ctl $pid start >/dev/null 2>&1
sleep 1
"$A" ctl $pid status >c.txt 2>&1
n_a=$(field samples a.txt)
within "$(field samples c.txt)" $((n_a + 1)) 1000000 "sampling goes on after start"
wait $pid
perf report -i stop.data --stdio >/dev/null 2>rep.err
clean_stderr rep.err
ok $? "the file of a stopped and started run reads without a warning" || diag_file rep.err

# Each process of a tree has its own endpoint and file.
AUTOPROF_QUIET=1 AUTOPROF_OUTPUT=tree.data LD_PRELOAD=$LIB \
	sh -c "$SVC 1 3 3 & $SVC 1 3 3; wait" >/dev/null 2>&1 &
top=$!
# both exec'd (bounded: a slow VM under the suite took more than a second)
for i in $(seq 100); do
	kids=$(pgrep -P $top -f progs/service)
	[ "$(echo $kids | wc -w)" -ge 2 ] && break
	sleep 0.1
done
n=0
for k in $kids; do
	# (tree.data.K.1 when the fork took a sample before its exec, as in a slow VM)
	wait_for $k && "$A" ctl $k status 2>&1 | grep -q "^file: $T/tree.data.$k\(\.[0-9]*\)\?\$" &&
		n=$((n + 1))
done
is "$n" 2 "both children of the tree answer, each naming its own file"
wait $top

# A process killed by SIGKILL leaves its endpoint: ctl says it is gone and removes it.
AUTOPROF_QUIET=1 AUTOPROF_OUTPUT=kill.data LD_PRELOAD=$LIB "$SVC" 1 5 5 >/dev/null 2>&1 &
pid=$!
wait_for $pid
dir=/tmp/autoprof-$(id -u)
[ -n "$XDG_RUNTIME_DIR" ] && dir=$XDG_RUNTIME_DIR/autoprof
ls "$dir/$pid" >/dev/null 2>&1
ok $? "the endpoint is $dir/$pid"
is "$(stat -c %a "$dir/$pid") $(stat -c %a "$dir")" "600 700" "endpoint 0600 in a 0700 folder"
kill -KILL $pid
wait $pid 2>/dev/null
# A process in its place (a reused pid): start time differs.
"$A" ctl $pid status >stale.txt 2>&1
rc=$?
[ $rc = 1 ] && [ "$(wc -l <stale.txt)" = 1 ] && grep -q "process $pid is gone\|no process $pid" stale.txt
ok $? "after SIGKILL: one line says the process is gone" || diag_file stale.txt
printf 'autoprof-control 1\npid %s\nstart 1\nsignal 40\ntoken 5\nfile /x\n' $$ >"$dir/$$"
"$A" ctl $$ status >reused.txt 2>&1
rc=$?
[ $rc = 1 ] && grep -q "process $$ is gone (it left a stale control endpoint, now removed)" reused.txt &&
	[ ! -e "$dir/$$" ]
ok $? "an endpoint whose pid now names another process: gone, and removed" || diag_file reused.txt

# The first process of a run sweeps the endpoints of processes that are gone.
sh -c 'exit 0' &
dead=$!
wait $dead
printf 'autoprof-control 1\npid %s\n' $dead >"$dir/$dead"
AUTOPROF_QUIET=1 AUTOPROF_OUTPUT=sweep.data LD_PRELOAD=$LIB "$SVC" 0 0 0.1 >/dev/null 2>&1
[ ! -e "$dir/$dead" ]
ok $? "an endpoint left by a process that is gone is swept at the next run's start"

# Bad input: one line naming the problem, exit status 1.
"$A" ctl abc status >bad1.txt 2>&1
rc=$?
[ $rc = 1 ] && [ "$(wc -l <bad1.txt)" = 1 ] && grep -q "'abc' is not a process id" bad1.txt
ok $? "a bad pid: one line, status 1" || diag_file bad1.txt
"$A" ctl 2147483 status >bad2.txt 2>&1
rc=$?
[ $rc = 1 ] && [ "$(wc -l <bad2.txt)" = 1 ] && grep -q "no process 2147483" bad2.txt
ok $? "no such process: one line, status 1" || diag_file bad2.txt
sleep 5 &
plain=$!
"$A" ctl $plain status >bad3.txt 2>&1
rc=$?
kill $plain
[ $rc = 1 ] && [ "$(wc -l <bad3.txt)" = 1 ] && grep -q "process $plain is not profiled by autoprof" bad3.txt
ok $? "a process without the library: one line, status 1" || diag_file bad3.txt
"$A" ctl $$ frobnicate >bad4.txt 2>&1
is "$?" 2 "an unknown request: usage, status 2"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	setpriv --reuid=65534 --regid=65534 --clear-groups "$A" ctl $$ status >bad5.txt 2>&1
	rc=$?
	[ $rc = 1 ] && [ "$(wc -l <bad5.txt)" = 1 ] && grep -q "process $$ belongs to another user" bad5.txt
	ok $? "another user's process: one line, status 1" || diag_file bad5.txt
else
	AUTOPROF_QUIET=1 LD_PRELOAD=$LIB "$SVC" 1 3 3 >/dev/null 2>&1 &
	pid=$!
	wait_for $pid
	skip "not root: another user's process cannot be made here"
	wait $pid
fi

# The program's own use of the signal number still reaches it (a sigqueue without our token).
AUTOPROF_QUIET=1 AUTOPROF_OUTPUT=own.data LD_PRELOAD=$LIB "$SVC" 1 2 2 >own.out 2>&1 &
pid=$!
wait_for $pid
"$A" ctl $pid status >/dev/null 2>&1
sig=$(sed -n 's/^signal //p' "$dir/$pid")
kill -"$sig" $pid 2>/dev/null
wait $pid 2>/dev/null
rc=$?
# The program has the default disposition for it: terminated by that signal, as without us.
is "$rc" $((128 + sig)) "a plain kill with the sampling number is the program's (default: it dies of it)"

# The program takes the sampling signal: sampling moves, and so does the endpoint.
if command -v python3 >/dev/null; then
	AUTOPROF_QUIET=1 AUTOPROF_OUTPUT=py.data LD_PRELOAD=$LIB python3 -c "
import signal, time
got = []
signal.signal(signal.SIGPROF, lambda *a: got.append(1))
open('ready', 'w').close()
time.sleep(3)
print('python got', len(got))
" >py.out 2>py.err &
	pid=$!
	i=0
	while [ ! -e ready ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	"$A" ctl $pid status >py.st 2>&1
	grep -q "^pid $pid: sampling on since" py.st
	ok $? "after the program took the default signal, ctl still reaches the process" || diag_file py.st
	kill -PROF $pid # the default sampling signal
	wait $pid
	is "$(cat py.out)" "python got 1" "and the program's own signal reaches its handler"
else
	skip "no python3"
	skip "no python3"
fi

# A Go program (cgo, dynamically linked): its runtime takes every real-time signal, so
# sampling moves (or our handler is chained); ctl still reaches it.
if [ -x "$B/hostile/cgo" ]; then
	AUTOPROF_START=0 AUTOPROF_QUIET=1 AUTOPROF_OUTPUT=go.data LD_PRELOAD=$LIB "$B/hostile/cgo" >go.out 2>&1 &
	pid=$!
	wait_for $pid
	"$A" ctl $pid start >go.st 2>&1
	grep -q "^pid $pid: sampling started" go.st
	ok $? "Go: start reaches the paused process" || diag_file go.st
	wait $pid
	share=$(perf_share go.data main.goHot)
	within "$share" 50 100 "Go: what was sampled after start is its hot loop"
else
	skip "build/hostile/cgo is not built (make check builds it)"
	skip "build/hostile/cgo is not built (make check builds it)"
fi
