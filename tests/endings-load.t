#!/bin/sh
# Every ending keeps a finished file, under load: with two CPU hogs running
# beside it, a program computing under the library ends by SIGTERM, SIGINT
# or SIGHUP at their default action (sent while it computes), exit, _exit,
# abort, an exec of the next image, a raw exit_group or SIGKILL. Each run
# must end as without the library (its exit status), within 10 s of the
# signal (a longer wait counts as a hang, and fails), and leave a file that
# perf report reads with nothing on stderr, with the samples of the work
# before the end (SIGKILL: up to the last flush, every 0.2 s).
#
# ENDINGS_RUNS (default 1) repeats every ending; scripts/bench/endings-load.sh
# runs it 20 times, and with openssl and Python as the programs.
. "$(dirname "$0")/lib.sh"
P=$B/progs
needs "$P/endings"
RUNS=${ENDINGS_RUNS:-1}
MODES="SIGTERM SIGINT SIGHUP exit _exit abort exec exit_group sigkill"
plan $((RUNS * 9 * 2 + 2))

ulimit -c 0
timeout -s KILL 300 sh -c 'while :; do :; done' >/dev/null 2>&1 &
hog1=$!
timeout -s KILL 300 sh -c 'while :; do :; done' >/dev/null 2>&1 &
hog2=$!
# TERM, not KILL: timeout passes it on to its hog (a KILLed timeout left its
# hog running, orphaned, until someone killed it).
trap 'kill -TERM $hog1 $hog2 2>/dev/null; wait $hog1 $hog2 2>/dev/null; rm -rf "$T"' EXIT

# status MODE: the exit status the ending gives without the library.
status() {
	case $1 in
	SIGTERM) echo 143 ;; SIGINT) echo 130 ;; SIGHUP) echo 129 ;;
	exit | exec) echo 5 ;; _exit) echo 6 ;; abort) echo 134 ;;
	exit_group) echo 4 ;; sigkill) echo 137 ;;
	esac
}

# run MODE: run one ending; prints its status, or "hang".
run() {
	case $1 in
	SIG*)
		# A background job of sh starts with SIGINT ignored: give it the default.
		timeout -s KILL 60 env --default-signal=INT,QUIT AUTOPROF_QUIET=1 \
			LD_PRELOAD="$LIB" "$P/endings" spin >prog.out 2>prog.err &
		pid=$!
		i=0
		while ! grep -q spinning prog.out 2>/dev/null && [ $i -lt 300 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		sleep 1 # past the first flush
		pkill -"${1#SIG}" -P $pid -x endings
		i=0
		while [ -n "$(pgrep -P $pid -x endings)" ] && [ $i -lt 100 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		if [ -n "$(pgrep -P $pid -x endings)" ]; then
			pkill -KILL -P $pid -x endings
			wait $pid
			echo hang
			return
		fi
		wait $pid
		echo $?
		;;
	*)
		timeout -s KILL 60 env AUTOPROF_QUIET=1 LD_PRELOAD="$LIB" "$P/endings" "$1" \
			>prog.out 2>prog.err
		rc=$?
		[ $rc = 137 ] && [ "$1" != sigkill ] && rc=hang
		echo $rc
		;;
	esac
}

for r in $(seq "$RUNS"); do
	for m in $MODES; do
		mkdir "$m.$r" && cd "$m.$r" || exit 1
		got=$(run "$m")
		is "$got" "$(status "$m")" "run $r, $m under load: the status of a plain run, no hang" ||
			diag_file prog.err
		perf report -i perf.data --stdio --no-children --sort sym >rep.txt 2>rep.err
		clean_stderr rep.err && grep -q '\] busy$' rep.txt
		ok $? "run $r, $m: perf report reads the file (nothing on stderr) with the work's samples" ||
			{ ls -la; diag_file rep.err; }
		cd ..
	done
done

# An image that took no sample hands its name to the next one at exec, and
# leaves its finished file there until the next replaces it: a process that
# dies before the next image has its own file (a signal in the exec, an
# image the library cannot enter) still leaves the run's file.
mkdir handover && cd handover || exit 1
timeout -s KILL 60 env AUTOPROF_QUIET=1 LD_PRELOAD="$LIB" sh -c 'exec /sbin/ldconfig -p' >/dev/null
ok $? "sh -c 'exec <static program>' runs as without the library"
perf report -i perf.data --stdio --header-only >rep.txt 2>rep.err && clean_stderr rep.err &&
	grep -q '^# cmdline : autoprof sh -c' rep.txt && [ -z "$(ls | grep -v '^perf.data$\|^perf.data.stat$\|^rep')" ]
ok $? "the file the empty first image left is there, finished, and nothing else" || { ls; diag_file rep.err; }
done_testing
