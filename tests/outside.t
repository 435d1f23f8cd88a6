#!/bin/sh
# The launcher's outside mode and attach (issue 20, doc/outside.md): programs
# the library cannot enter (gcc -static without frame pointers, musl-static,
# Go with CGO_ENABLED=0 static and -buildmode=pie, raw clone threads with and
# without CLONE_SETTLS, a raw exit_group, a process tree of static programs)
# profiled from outside, and `-p` on a process started without the library,
# with a thread made after the attach. Each profile is read by perf report,
# perf script, hotspot-perfparser and autoprof-report: samples present, the
# hot function named, stacks reaching main (or the thread's entry), the exit
# status kept. The programs are built here (tests/outside/).
. "$(dirname "$0")/lib.sh"
needs "$B/autoprof" "$REPORT"
echo "TAP version 13"
T0=$(date +%s)
A=$B/autoprof
SRC=$ROOT/tests/outside

cc -static -O2 -g -o hot-static "$SRC/hot.c" 2>cc.err || diag_file cc.err
cc -O2 -g -o hot-dyn "$SRC/hot.c" 2>>cc.err || diag_file cc.err
cc -static-pie -O2 -g -o hot-spie "$SRC/hot.c" 2>>cc.err || diag_file cc.err
if command -v musl-gcc >/dev/null 2>&1; then
	musl-gcc -static -O2 -g -o hot-musl "$SRC/hot.c" 2>>cc.err || diag_file cc.err
fi
GO=$(command -v go || echo /usr/lib/go/bin/go)
if [ -x "$GO" ]; then
	mkdir -p "$B/outside-go/gocache" "$B/outside-go/gopath"
	for mode in static pie; do
		flags=
		[ $mode = pie ] && flags=-buildmode=pie
		(GOCACHE=$B/outside-go/gocache GOPATH=$B/outside-go/gopath GOFLAGS=-mod=mod \
			GOPROXY=off GO111MODULE=off CGO_ENABLED=0 timeout -s KILL 100 \
			"$GO" build $flags -o "go-$mode" "$SRC/spin.go") 2>go.err || diag_file go.err
	done
fi

diag "built the programs in $(($(date +%s) - T0)) s"

# run NAME STATUS CMD...: profile CMD into NAME.data (stderr in NAME.err);
# check the exit status, the mode line and the closing line.
run() {
	_name=$1 _want=$2
	shift 2
	timeout -s KILL 60 "$A" -o "$_name.data" "$@" >"$_name.out" 2>"$_name.err"
	_st=$?
	is "$_st" "$_want" "$_name: the command's exit status ($_want) is kept"
	grep -q "^autoprof: profiling .* from outside (.*); .* at [0-9]* Hz; stacks: " "$_name.err" &&
		grep -q "^autoprof: wrote $_name.data ([1-9][0-9]* samples" "$_name.err"
	ok $? "$_name: one mode line and the closing line"
	grep -q "^autoprof: wrote" "$_name.err" || diag_file "$_name.err"
}

# stacks NAME FUNC ROOT MIN: perf script reads NAME.data with MIN samples or
# more; of those in FUNC, at least 90% have ROOT below it; autoprof-report,
# perf report and hotspot-perfparser read it and name FUNC.
stacks() {
	_f=$1.data
	perf_script "$_f" -F comm,tid,ip,sym >"$1.script"
	set -- "$1" "$2" "$3" "$4" "$(awk -v f="$2" -v r="$3" '
		function flush() { if (n) { s++; if (hf) { inf++; if (hr) both++ } } n = hf = hr = 0 }
		/^[^ \t]/ { flush(); n = 1; next }
		/^[ \t]*$/ { flush(); next }
		{ if ($2 ~ "^" f "(\\+|$)") hf = 1; if (hf && $2 ~ "^" r "(\\+|$)") hr = 1 }
		END { flush(); printf "%d %d %d", s, inf, both }' "$1.script")"
	set -- "$1" "$2" "$3" "$4" $5
	within "$5" "$4" 1000000 "$1: samples in perf script"
	within "$(awk -v a="$7" -v b="$6" 'BEGIN { print b ? 100 * a / b : 0 }')" 90 100 \
		"$1: stacks in $2 reach $3 ($7 of $6)"
	perf report -i "$_f" --stdio --no-children --sort sym 2>"$1.perr" | grep -q "\] $2\$" &&
		clean_stderr "$1.perr"
	ok $? "$1: perf report names $2, with nothing on stderr"
	clean_stderr "$1.perr" || diag_file "$1.perr"
	"$REPORT" "$_f" >"$1.rep" 2>&1 && grep -q " $2 " "$1.rep"
	ok $? "$1: autoprof-report names $2"
	"$PERFPARSER" --input "$_f" --print-stats >"$1.pp" 2>&1
	ok $? "$1: hotspot-perfparser reads it"
}

# gcc -static -O2: no frame pointers, stacks from DWARF unwinding.
run static 3 ./hot-static 4
grep -q "statically linked" static.err && grep -q "stacks: DWARF" static.err
ok $? "static: the mode line says why (statically linked) and how (DWARF)"
stacks static hot_leaf main 100
[ -s static.data.stat ] && perf stat report -i static.data.stat >stat.txt 2>&1 &&
	grep -q "task-clock" stat.txt
ok $? "static: the counters in static.data.stat (perf stat report)"

# Death by a signal: the launcher dies of it too, and the file is whole.
timeout -s KILL 60 "$A" -q -o sig.data ./hot-static signal
is "$?" 143 "signal: the command's death by SIGTERM comes back through the launcher"
perf report -i sig.data --stdio >sig.txt 2>sig.perr && grep -q hot_leaf sig.txt
ok $? "signal: the file reads in perf report"

run static-pie 3 ./hot-spie 4
stacks static-pie hot_leaf main 100

# kill -TERM to the launcher reaches the command; the file is finished.
timeout -s KILL 60 "$A" -q -o term.data ./hot-static 60 &
lp=$!
sleep 1
kill -TERM $lp
wait $lp
is "$?" 143 "kill -TERM to the launcher: the command dies of it, and so does the launcher"
perf report -i term.data --stdio 2>term.perr | grep -q hot_leaf && clean_stderr term.perr
ok $? "kill -TERM to the launcher: the file reads cleanly"

if [ -x hot-musl ]; then
	run musl 3 ./hot-musl 4
	stacks musl hot_leaf main 100
else
	skip "musl-gcc missing (scripts/install-deps.sh test installs musl-tools)"
fi

# Raw clone threads, without and with CLONE_SETTLS, and a raw exit_group.
for how in notls tls; do
	run "clone-$how" 5 ./hot-static clone $how
	stacks "clone-$how" clone_leaf clone_body 50
	within "$(awk '/^[^ \t]/ { t = $2 } /clone_leaf/ { c[t] = 1 } END { print length(c) }' \
		"clone-$how.script")" 2 2 "clone-$how: both clone threads sampled"
done
# -k: kernel frames named, with the user stack below them (reads of /dev/zero).
if [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 1 -o "$(id -u)" = 0 ] &&
	awk '$3 == "_text" { exit !($1 !~ /^0+$/) }' /proc/kallsyms; then
	timeout -s KILL 60 "$A" -q -k -o kern.data ./hot-static zero
	perf_script kern.data -F ip,sym,dso >kern.script
	awk '/kernel.kallsyms/ { k = 1 } /^[ \t]*$/ { k = 0 } k && / zero_read / { n++ }
		END { exit !(n >= 10) }' kern.script
	ok $? "-k: kernel frames (named) above the user stack (read, zero_read)"
else
	skip "-k: kernel sampling or kallsyms addresses not allowed here"
fi

# The same threads of a dynamic program, under --outside (the library would see none).
run dyn-clone 5 --outside ./hot-dyn clone tls
grep -q "from outside (--outside)" dyn-clone.err
ok $? "dyn-clone: the mode line names --outside"
stacks dyn-clone clone_leaf clone_body 50

# A static program that forks and execs static children: every process.
run forks 0 ./hot-static fork ./hot-static
stacks forks hot_leaf main 150
within "$(awk '/^[^ \t]/ { t[$2] = 1 } END { print length(t) }' forks.script)" 2 3 \
	"forks: the exec'd children sampled"

# Go without cgo: static, and a PIE (dynamic: the library would step aside).
for mode in static pie; do
	if [ -x "go-$mode" ]; then
		run "go-$mode" 4 "./go-$mode"
		grep -q "frame-pointer chains" "go-$mode.err"
		ok $? "go-$mode: frame-pointer stacks (Go keeps them)"
		# A leaf without a frame of its own hides its caller from frame-pointer
		# chains, as in perf record -g: main.work's stacks end at the goroutine's root.
		stacks "go-$mode" main.work runtime.goexit.abi0 100
	else
		skip "go-$mode: go build failed or go is missing"
	fi
done
if [ -x go-pie ]; then
	rm -f perf.data perf.data.stat
	# (timeout runs a shell without the library, which runs go-pie with it)
	timeout -s KILL 60 sh -c 'LD_PRELOAD=$1 exec ./go-pie' sh "$LIB" >pre.out 2>pre.err
	st=$?
	is "$st" 4 "go-pie under bare LD_PRELOAD: exit status kept"
	grep -q "Go program without cgo.*not profiling" pre.err && [ ! -e perf.data ]
	ok $? "go-pie under bare LD_PRELOAD: one line, and no 0-sample file"
	grep -q "not profiling" pre.err || diag_file pre.err
	ls perf.data* 2>/dev/null
else
	skip "go-pie: not built"
fi

# -p: a process started without the library; its second thread starts after the attach.
cc -O2 -g -pthread -o late "$SRC/late.c"
./late 2.4 >late.out 2>&1 &
pid=$!
sleep 0.3
timeout -s KILL 30 "$A" -o attach.data -p $pid >attach.log 2>attach.err
is "$?" 0 "-p: autoprof ends with the process, status 0"
wait $pid
grep -q "^autoprof: attached to 1 thread of" attach.err &&
	grep -q "^autoprof: wrote attach.data ([1-9][0-9]* samples" attach.err
ok $? "-p: the attach line and the closing line"
grep -q "^autoprof: wrote" attach.err || diag_file attach.err
stacks attach late_burn "(main|late_thread)" 100
awk '/^[^ \t]/ { t = $2 } /late_thread/ { c[t]++ } END { for (k in c) print k, c[k] }' \
	attach.script >late.n
within "$(awk '{ print $2 }' late.n)" 50 100000 \
	"-p: the thread made after the attach is sampled, with its stack"
[ "$(wc -l <late.n)" = 1 ] || perf_script attach.data -F tid | sort | uniq -c | diag_file /dev/stdin

# --duration, and a process that runs on.
./late 5 >late2.out 2>&1 &
pid=$!
sleep 0.2
timeout -s KILL 30 "$A" -q -o dur.data -p $pid --duration 0.5 2>dur.err
is "$?" 0 "--duration: autoprof stops by itself"
[ -s dur.err ] && { diag_file dur.err; diag_file late2.out; ls -la /proc/$pid/ | head -3; }
kill -0 $pid 2>/dev/null
ok $? "--duration: the process runs on after the detach"
kill $pid
wait $pid 2>/dev/null
# Samples follow the CPU time late gets: in a loaded make check it got 98 in
# the half second (a third of a CPU); the upper bound is what --duration keeps.
within "$(perf_script dur.data -F time | grep -c .)" 40 1000 "--duration 0.5: about 0.5 s of samples"

# -p on a process that has two threads already: the events of the second
# thread share the CPU's ring (the kernel takes PERF_EVENT_IOC_SET_OUTPUT
# only to a mapped ring), and both threads are sampled.
./late 2.4 >late2t.out 2>&1 &
pid=$!
sleep 1.2
timeout -s KILL 30 "$A" -o two.data -p $pid >two.log 2>two.err
is "$?" 0 "-p on a process with two threads: status 0"
grep -q "^autoprof: attached to 2 threads of" two.err
ok $? "-p on a process with two threads: both attached" || diag_file two.err
wait $pid
is "$(perf_script two.data -F tid | sort -u | grep -c .)" 2 "-p on a process with two threads: both sampled"

# An idle process: 0 samples, and the closing lines say why. (Attached once it sleeps: a
# slow VM's start of sleep took a sample of its own when -p came at once.)
sleep 10 &
pid=$!
for i in $(seq 30); do
	[ "$(awk '{ print $3 }' /proc/$pid/stat 2>/dev/null)" = S ] &&
		{ grep -q nanosleep /proc/$pid/wchan 2>/dev/null ||
			! grep -q '[a-z]' /proc/$pid/wchan 2>/dev/null; } && break
	sleep 0.1
done
timeout -s KILL 30 "$A" -o idle.data -p $pid --duration 0.3 2>idle.err
grep -q "^autoprof: idle.data: 0 samples: the process did not run in user mode" idle.err
ok $? "-p on an idle process: 0 samples, and why" || diag_file idle.err
kill $pid
wait $pid 2>/dev/null

# A command that cannot run: its status, and no file (as without us).
"$A" --outside -o nx.data /nonexistent/program 2>nx.err
is "$?" 127 "--outside with a missing command: status 127"
[ ! -e nx.data ] && grep -q "cannot run '/nonexistent/program'" nx.err
ok $? "--outside with a missing command: one line, no file"

# Another user's process: one line naming what is needed, status 1, no file.
# The launchers are copied where that user can reach them: autoprof execs
# autoprof-outside as that user (a checkout in /root is out of its reach).
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1; then
	nb=$(mktemp -d /tmp/autoprof-nobody.XXXXXX)
	chmod 755 "$nb"
	cp "$A" "$B/autoprof-outside" "$nb/"
	(cd / && timeout -s KILL 30 setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$nb/autoprof" -o /tmp/autoprof-outside-denied.$$ -p 1 --duration 0.1) >denied.out 2>denied.err
	is "$?" 1 "-p on another user's process: status 1"
	[ "$(wc -l <denied.err)" = 1 ] && grep -q "perf_event_paranoid.*CAP_PERFMON.*CAP_SYS_PTRACE" denied.err &&
		[ ! -e /tmp/autoprof-outside-denied.$$ ]
	ok $? "-p on another user's process: one line naming the sysctl and capability, no file"
	diag_file denied.err
	rm -rf "$nb"
else
	skip "-p permissions: needs root (to run as another user) and setpriv"
	skip "-p permissions"
fi

# Bad input: one line, status 2.
"$A" -p 999999999 >bad.out 2>bad.err
is "$?" 2 "-p with a pid that cannot exist: status 2"
"$A" -p nope -- true >bad2.out 2>bad2.err
is "$?" 2 "-p with a bad list: status 2"
[ "$(wc -l <bad2.err)" = 1 ]
ok $? "-p with a bad list: one line"

echo "1..$_n"
done_testing
