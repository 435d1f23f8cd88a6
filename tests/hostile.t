#!/bin/sh
# Hostile programs (issue 11): each case runs a program plain and profiled
# (LD_PRELOAD=$LIB with default options unless the case says otherwise) and
# compares what anyone can observe: stdout, stderr less lines starting with
# "autoprof:", how it ended (exit status, or signal and core flag), and the
# files it wrote. Each profile written must read in `perf report` with
# nothing on stderr, and hold samples in the case's hot function. Every run
# is under a time limit; a timeout is a failure. The programs are in
# tests/hostile/ (built by tests/hostile/hostile.mk into build/hostile/).
#
# HOSTILE_ONLY=REGEX runs only the cases whose name matches.
. "$(dirname "$0")/lib.sh"
echo "TAP version 13"

if ! make -C "$ROOT" -s hostile-progs >make.log 2>&1; then
	echo "Bail out! make hostile-progs failed"
	diag_file make.log
	exit 1
fi
H=$B/hostile
RUNST=$H/runst
PY=/usr/bin/python3
PLUG=$H/lib/libhostplug.so
# SIGRTMIN is 34 under glibc; RTMIN+5 was the library's default sampling signal.
RTMIN5=39

# Core flags are compared only where a core lands in the case's own directory
# (a relative core_pattern); otherwise cores stay off in both runs.
case "$(cat /proc/sys/kernel/core_pattern)" in
'|'* | /*) CORE_OK=0 ;;
*) CORE_OK=1 ;;
esac

# side DIR PROFILED CMD...: run CMD in DIR/run; DIR/out, DIR/err, DIR/status.
side() {
	_d=$1 _p=$2
	shift 2
	# Every side runs in the same directory ($_cd/run, moved to DIR/run
	# afterwards): the program sees one PWD whether profiled or not.
	rm -rf "$_cd/run"
	mkdir -p "$_cd/run" "$_d/prof"
	if [ "$_p" = 1 ] && [ "$o_launcher" = 1 ]; then
		set -- "$B/autoprof" -o "$_d/prof/perf.data" -- "$@"
	elif [ "$_p" = 1 ]; then
		_e="-e LD_PRELOAD=$LIB -e AUTOPROF_OUTPUT=$_d/prof/perf.data"
		for _v in $o_env; do _e="$_e -e $_v"; done
		# shellcheck disable=SC2086
		set -- $_e -- "$@"
	else
		set -- -- "$@"
	fi
	_s=
	for _v in $o_sig; do _s="$_s -s $_v"; done
	(
		cd "$_cd/run" || exit 1
		if [ "$o_core" = 1 ] && [ "$CORE_OK" = 1 ]; then ulimit -c unlimited; else ulimit -c 0; fi
		# shellcheck disable=SC2086
		"$RUNST" -o "$_d/status" -t "$o_tmo" $_s "$@" <"$o_stdin" >"$_d/out" 2>"$_d/err.raw"
	)
	if [ "$_p" = 1 ]; then
		grep -v '^autoprof:' "$_d/err.raw" >"$_d/err"
	else
		cp "$_d/err.raw" "$_d/err"
	fi
	mv "$_cd/run" "$_d/run"
	(cd "$_d/run" && find . -type f ! -name 'core' ! -name 'core.*' -exec md5sum {} + | sort -k2) \
		>"$_d/files"
}

# differ WHAT A B: note a difference between files A and B in $_why/$_diags.
differ() {
	if ! cmp -s "$2" "$3"; then
		_why="$_why $1"
		{
			echo "$1 differs (< plain, > profiled):"
			diff "$2" "$3" | grep '^[<>]' | head -n 12
		} >>"$_cd/diags"
	fi
}

# profile_check DIR: the profiles in DIR/prof read cleanly and hold o_hot.
profile_check() {
	_n_prof=0
	: >"$1/report"
	# The largest files first; at most six are read.
	for _f in $(ls -S "$1/prof" 2>/dev/null | grep -v '\.old$\|\.stat$' | head -n 6); do
		_f=$1/prof/$_f
		_n_prof=$((_n_prof + 1))
		perf report -i "$_f" --stdio --no-children --sort sym >"$_f.rep" 2>"$_f.rerr"
		grep -E '^ +[0-9.]+%' "$_f.rep" >>"$1/report"
		# A file without samples is judged by the o_hot check below, not here.
		if [ "$(grep -cv -e '^Error:$' -e 'data has no samples!$' "$_f.rerr")" != 0 ]; then
			_why="$_why perf-report-stderr"
			{
				echo "perf report -i $(basename "$_f") wrote on stderr:"
				head -n 4 "$_f.rerr"
			} >>"$_cd/diags"
		fi
		if [ "$o_hdr" = 1 ] && [ "$(basename "$_f")" = perf.data ]; then
			if ! perf report -i "$_f" --header-only 2>/dev/null | grep -q '^# cmdline'; then
				_why="$_why no-cmdline"
				echo "perf.data has no cmdline feature section" >>"$_cd/diags"
			fi
			if ! perf buildid-list -i "$_f" 2>/dev/null | grep -q "$o_prog"; then
				_why="$_why no-buildid"
				echo "perf buildid-list names no build id for $o_prog" >>"$_cd/diags"
			fi
		fi
	done
	if [ -n "$o_hot" ]; then
		if [ "$_n_prof" = 0 ]; then
			_why="$_why no-profile"
			echo "no profile was written" >>"$_cd/diags"
		elif ! grep -Eq -- "$o_hot" "$1/report"; then
			_why="$_why no-hot-samples"
			{
				echo "no sample matches /$o_hot/ in perf report; its top lines:"
				head -n 5 "$1/report"
				[ -s "$1/report" ] || echo "(the profiles hold no samples at all)"
			} >>"$_cd/diags"
		fi
	fi
}

# hcase NAME [hot=REGEX] [env="N=V ..."] [sig="SIG@MS ..."] [runs=N] [core=1]
#       [launcher=1] [hdr=1] [tmo=S] -- COMMAND...
# One TAP line: NAME passes when every profiled run matches the plain run.
hcase() {
	_name=$1
	shift
	o_hot=hostile_hot o_env='' o_sig='' o_runs=1 o_core=0 o_launcher=0 o_hdr=0 o_tmo=60
	o_stdin=/dev/null
	while [ "$1" != -- ]; do
		case "$1" in
		hot=*) o_hot=${1#hot=} ;;
		env=*) o_env=${1#env=} ;;
		sig=*) o_sig=${1#sig=} ;;
		runs=*) o_runs=${1#runs=} ;;
		core=*) o_core=${1#core=} ;;
		launcher=*) o_launcher=${1#launcher=} ;;
		hdr=*) o_hdr=${1#hdr=} ;;
		tmo=*) o_tmo=${1#tmo=} ;;
		*)
			echo "Bail out! hcase $_name: bad option $1"
			exit 1
			;;
		esac
		shift
	done
	shift
	if [ -n "$HOSTILE_ONLY" ] && ! echo "$_name" | grep -Eq -- "$HOSTILE_ONLY"; then
		return
	fi
	o_prog=$(basename "$1")
	_cd=$T/$_name
	mkdir -p "$_cd"
	: >"$_cd/diags"
	_why=
	side "$_cd/plain" 0 "$@"
	if [ "$(cat "$_cd/plain/status")" = timeout ]; then
		_why=" plain-run-timeout"
	fi
	_i=1
	while [ "$_i" -le "$o_runs" ]; do
		_pd=$_cd/prof$_i
		side "$_pd" 1 "$@"
		_w0=$_why
		if [ "$(cat "$_pd/status")" = timeout ]; then
			_why="$_why timeout"
			echo "profiled run $_i: timeout after ${o_tmo}s (killed)" >>"$_cd/diags"
		else
			differ status "$_cd/plain/status" "$_pd/status"
			differ stdout "$_cd/plain/out" "$_pd/out"
			differ stderr "$_cd/plain/err" "$_pd/err"
			differ files "$_cd/plain/files" "$_pd/files"
			profile_check "$_pd"
		fi
		[ "$_why" != "$_w0" ] && [ "$o_runs" -gt 1 ] && _why="$_why (run $_i of $o_runs)"
		_i=$((_i + 1))
	done
	if [ -z "$_why" ]; then
		ok 0 "$_name"
	else
		ok 1 "$_name:$_why"
		diag "command: $*"
		diag_file "$_cd/diags"
	fi
}

# --- the rows of issue 11's table -------------------------------------------
hcase py-subprocess-run hot='_PyEval|PyObject|python' -- "$PY" "$ROOT/tests/hostile/pysub.py" run
hcase py-multiprocessing-spawn hot='_PyEval|PyObject|python' -- \
	"$PY" "$ROOT/tests/hostile/pysub.py" spawn
hcase go-cgo-busy hot='main\.goHot|c_hot' -- "$H/cgo"
hcase rust-catch-unwind-panics runs=3 env=AUTOPROF_FREQ=10000 hot=rust_hot -- "$H/panics"
hcase dlopen-dlclose-two-threads runs=3 tmo=30 env=AUTOPROF_FREQ=10000 -- "$H/dlrace" "$PLUG" 2
hcase pthread-cancel-50 runs=2 tmo=60 -- "$H/cancel"
hcase dup2-onto-1000-file -- "$H/dupfd" file
hcase dup2-onto-1000-pipe-eof tmo=15 -- "$H/dupfd" pipe
hcase dlopen-runpath-origin -- "$H/runpath"
hcase py-ctrl-c-keyboardinterrupt sig=2@1000 hot='_PyEval|PyObject|python' -- \
	"$PY" "$ROOT/tests/hostile/pysub.py" sigint
hcase py-ctrl-c-uncaught sig=2@1000 hot='_PyEval|PyObject|python' -- \
	"$PY" "$ROOT/tests/hostile/pysub.py" sigint_uncaught
hcase signals-handle-every-signal -- "$H/sigs" all
hcase signals-signalfd-all-blocked -- "$H/sigs" signalfd
hcase signals-sigwaitinfo -- "$H/sigs" sigwait
hcase signals-mask-read-back -- "$H/sigs" mask
hcase signals-external-sigrtmin5 sig=$RTMIN5@700 -- "$H/sigs" external
# SIGPROF (27), the default sampling signal since issue 21, sent from outside.
hcase signals-external-sigprof sig=27@700 -- "$H/sigs" external
# Issue 21: all signals blocked and read through signalfd/sigtimedwait, real-time
# signals queued to itself, SIGPROF raised to itself.
hcase signals-own-signalfd -- "$H/sigown" signalfd 4
hcase signals-own-sigtimedwait -- "$H/sigown" sigtimedwait 4
hcase seccomp-strict -- "$H/seccomp" strict
hcase death-control-normal-exit hdr=1 -- "$H/deaths" none
for m in quick_exit exit_group sigpipe sigalrm sigusr1 abort; do
	hcase "death-$m" hdr=1 core=1 -- "$H/deaths" "$m"
done
# Raw clone threads are not sampled (doc/limits.md): the program must run as
# without us and its file read cleanly; its main thread only waits.
hcase raw-clone-threads hot= -- "$H/rawclone"
hcase nofile-64-threads-limit-1024 -- "$H/nofile" 64 1024
hcase launcher-sigsegv-core launcher=1 core=1 -- "$H/deaths" segv
hcase preload-sigsegv-core core=1 hdr=1 -- "$H/deaths" segv

# --- beyond the table --------------------------------------------------------
hcase cxx-threads-throw-catch runs=2 env=AUTOPROF_FREQ=10000 -- "$H/throw"
hcase seccomp-filter-eperm-perf -- "$H/seccomp" filter
hcase epoll-server-signalfd-sigchld -- "$H/server"
hcase sigchld-handler-sigsuspend -- "$H/sigheavy" sigchld
hcase timers-itimer-real-prof-virtual -- "$H/sigheavy" timers
hcase fds-proc-self-fd-list -- "$H/fds" list
hcase fds-close_range-all -- "$H/fds" closerange
hcase fds-close-loop-raw-syscall -- "$H/fds" closeloop
hcase fds-closefrom -- "$H/fds" closefrom
hcase fork-storm-200 -- "$H/procs" forkstorm
hcase vfork-child-resets-signals-exec -- "$H/procs" vfork
hcase posix-spawn-setsigdef-setsigmask -- "$H/procs" spawn
hcase thread-churn-3000 -- "$H/procs" churn
hcase exec-self-changed-env -- "$H/procs" reexec
hcase errno-after-calls -- "$H/misc" errno
hcase sigaltstack-handlers -- "$H/misc" altstack
hcase sigwait-all-blocked-all-threads -- "$H/misc" sigwait
hcase longjmp-out-of-handlers -- "$H/misc" longjmp
hcase environment-minus-ours -- "$H/misc" env
hcase setrlimit-read-back-and-use -- "$H/misc" rlimit
hcase py-threads-setitimer hot='_PyEval|PyObject|python' -- \
	"$PY" "$ROOT/tests/hostile/pysub.py" threads
hcase shell-exec-storm hot= -- sh "$ROOT/tests/hostile/storm.sh" exec
hcase shell-traps-and-kill hot= -- sh "$ROOT/tests/hostile/storm.sh" trap
if command -v node >/dev/null 2>&1; then
	hcase node-busy-loop hot='%' -- node -e \
		'let x = 0; for (let i = 0; i < 3e8; i++) x = (x * 31 + i) | 0; console.log("node", x)'
else
	skip "node-busy-loop: node is not installed"
fi
if command -v java >/dev/null 2>&1 && command -v javac >/dev/null 2>&1; then
	hcase java-version hot= -- java -version
	hcase java-busy-source-launcher hot='%' -- java "$ROOT/tests/hostile/Busy.java"
else
	skip "java-version: no JDK (java and javac) installed"
	skip "java-busy-source-launcher: no JDK (java and javac) installed"
fi

echo "1..$_n"
done_testing
