#!/bin/sh
# Endings that run none of the profiler's exit code (quick_exit, a raw
# exit_group, SIGKILL) and sandboxes that forbid its system calls (seccomp
# strict mode, a filter on every thread): the program behaves as without the
# library, and the file it leaves is a finished profile: perf report reads
# it with nothing on stderr, with the command line and the samples taken
# before the end. Every run is under a timeout that counts as a failure.
. "$(dirname "$0")/lib.sh"
plan 26

P=$B/progs

for m in quick_exit exit_group sigkill strict filter; do
	mkdir $m && cd $m
	timeout -s KILL 60 "$P/endings" $m >plain.out 2>/dev/null
	echo $? >plain.rc
	timeout -s KILL 60 env AUTOPROF_QUIET=1 LD_PRELOAD="$LIB" "$P/endings" $m >prof.out 2>prof.err
	echo $? >prof.rc
	[ "$(cat plain.rc)" = "$(cat prof.rc)" ] && cmp -s plain.out prof.out
	ok $? "$m: same output and exit status ($(cat prof.rc)) as without the library" ||
		{ diag_file prof.out; diag_file prof.err; }
	perf report -i perf.data --stdio --header >rep.txt 2>rep.err
	clean_stderr rep.err
	ok $? "$m: perf report --header reads the file with nothing on stderr" || diag_file rep.err
	grep -q "^# cmdline : autoprof $P/endings $m *\$" rep.txt
	ok $? "$m: the command line is in the file"
	perf report -i perf.data --stdio --no-children --sort sym 2>/dev/null | grep -q '\] busy$'
	ok $? "$m: the samples of the work before the end are in the file"
	cd ..
done

# exit while other threads fork: glibc unregisters an object's fork handlers as it finalizes
# the object at exit; ours, unregistered while a fork ran them, aborted the program ("array
# index 1 not less than array length 0") or hung the next fork on our lock (1-6 runs of 20).
mkdir forkexit && cd forkexit
bad=0
for i in $(seq 20); do
	timeout -s KILL 30 env AUTOPROF_QUIET=1 LD_PRELOAD="$LIB" "$P/endings" forkexit >prof.out 2>prof.err
	rc=$?
	if [ $rc != 7 ] || [ "$(cat prof.out)" != "exit while forking next" ] || [ -s prof.err ]; then
		bad=$((bad + 1))
		diag "run $i: status $rc, $(head -c 300 prof.err)"
	fi
done
is "$bad" 0 "forkexit: 20 runs of exit(7) while threads fork, each as without the library"
perf report -i perf.data --stdio --no-children --sort sym 2>rep.err | grep -q '\] busy$'
ok $? "forkexit: perf reads the last run's file, with the work before the exit" || diag_file rep.err
cd ..

# SIGKILL in the middle of the end: a file made at the end (a child's, made at its first flush)
# was named before it was whole; killed between, it stayed empty or said "data size 0", and
# perf report failed on it (22 of 188 files before).
mkdir killexit && cd killexit
if ! python3 -c 'import os; os.close(os.open(".", os.O_TMPFILE | os.O_WRONLY, 0o600))' 2>/dev/null; then
	for t in killexit killexit startkill startkill; do
		skip "$t: no O_TMPFILE in $PWD's file system: files are made by their names here"
	done
	done_testing
fi
# kill_rounds ENV MODE MS...: `endings MODE 100 MS` with ENV, in rounds, MS growing (a loaded
# machine starts and ends programs later), until 20 files or the last MS; sets files and bad
# (the files perf report reads with something on stderr).
kill_rounds() {
	_env=$1 _mode=$2
	shift 2
	files=0 bad=0 _r=0
	for _ms in "$@"; do
		[ "$files" -ge 20 ] && break
		_r=$((_r + 1))
		mkdir "r$_r" && cd "r$_r" || return
		timeout -s KILL 120 env AUTOPROF_QUIET=1 "$_env" "$P/endings" "$_mode" 100 "$_ms" >prof.out
		for f in perf.data* sk.*.data; do
			case $f in *.stat | 'perf.data*' | 'sk.*.data') continue ;; esac
			files=$((files + 1))
			perf report -i "$f" --stdio --no-children --sort sym >/dev/null 2>rep.err
			if grep -qv -e '^Error:$' -e 'has no samples!$' rep.err; then
				bad=$((bad + 1))
				[ $bad -le 3 ] && diag "$_ms ms, $f: $(head -n 2 rep.err | tr '\n' ' ')"
			fi
		done
		cd ..
	done
}
kill_rounds LD_PRELOAD="$LIB" killexit 5 5 5 10 20 40 80 160
[ "$files" -ge 20 ]
ok $? "killexit: children killed around their exits left $files files (20 or more)" ||
	diag "$(ls -d r*)"
is "$bad" 0 "killexit: perf report reads each of the $files files with nothing on stderr"
cd ..

# SIGKILL in the middle of the start: the run's first process made its file as it started,
# its header saying "data size 0" until its first records (9 of 127 files before); now the
# file is made by those records, whole.
mkdir startkill && cd startkill
kill_rounds START_PRELOAD="$LIB" startkill 10 10 20 40 80 160 320 640
[ "$files" -ge 20 ]
ok $? "startkill: programs killed in their first milliseconds left $files files (20 or more)" ||
	diag "$(ls -d r*)"
is "$bad" 0 "startkill: perf report reads each of the $files files with nothing on stderr"
cd ..
done_testing
