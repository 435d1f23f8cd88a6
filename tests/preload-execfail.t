#!/bin/sh
# preload-execfail.t - the exec family's less common doors: execveat and the
# execs made through syscall() (no wrapper saw them: the next image took the
# first's name and moved its unfinished file aside to NAME.old), and execs
# that fail by each door (execve, execveat, fexecve, syscall, posix_spawn,
# a vfork child's; an execve of a path that does not exist, which the
# library lets fail without finishing its file): the program sees the same
# return value, errno, output and exit status as without us, and its profile
# goes on after the failure, on every thread.
# tests/progs/execfam drives each case. No timing is measured.
. "$(dirname "$0")/lib.sh"
needs "$B/progs/execfam" "$B/libautoprof.so" "$B/libautoprof-memory.so" "$B/autoprof"
plan 23

P=$B/progs/execfam
A=$B/autoprof
. "$ROOT/tests/memlib.sh" # MEMPRELOAD

# site FILE SYMBOL: the samples of FILE with SYMBOL in their stack (perf script).
site() {
	perf script -i "$1" -F ip,sym 2>>perf.err |
		awk -v s="$2" 'NF == 0 { n += hit; hit = 0; next } $2 == s { hit = 1 }
			END { print n + hit }'
}

# ---- a successful exec by execveat or syscall(): each image its own profile ----
for m in execveat sysexec sysexecat; do
	rm -rf $m.data*
	timeout -s KILL 60 "$A" -o $m.data -- "$P" $m >$m.out 2>$m.err
	rc=$?
	n=$(perf script -i $m.data -F comm,ip,sym 2>>perf.err | grep -c spin_site)
	ls $m.data* | grep -v '\.stat$' >$m.files
	[ $rc = 3 ] && [ "$n" -gt 0 ] && [ "$(wc -l <$m.files)" = 1 ] &&
		grep -q 'holds 2 process images' $m.err
	ok $? "$m of /bin/sh: its status (3), the first image's samples in the run's file ($n), no other file" ||
		{ diag_file $m.files; diag_file $m.err; }
done

# ---- execs that fail: the same return, errno and output; profiling goes on ----
# (with memory profiles too: both libraries preloaded, every allocation sampled)
for k in execve missing execveat fexecve fexecvebad sysexec spawn vfork; do
	want=$(timeout -s KILL 60 "$P" fail $k 2>&1; echo "status $?")
	rm -rf f$k.data* g$k.data*
	got=$(timeout -s KILL 60 env AUTOPROF_OUTPUT=f$k.data LD_PRELOAD="$LIB" "$P" fail $k 2>f$k.err
		echo "status $?")
	mem=$(timeout -s KILL 60 env AUTOPROF_OUTPUT=g$k.data AUTOPROF_MEMORY=1 AUTOPROF_MEMORY_INTERVAL=1 \
		LD_PRELOAD="$MEMPRELOAD" "$P" fail $k 2>g$k.err
		echo "status $?")
	before=$(site f$k.data spin_site) after=$(site f$k.data after_site)
	[ "$got" = "$want" ] && [ "$mem" = "$want" ] && [ "$before" -gt 0 ] && [ "$after" -gt 0 ]
	ok $? "a failed $k: as without us ($(echo $got | tr '\n' ' '); with --memory too), samples ($before), after the exec ($after)" ||
		{ diag "want: $want"; diag "memory: $mem"; diag_file f$k.err; diag_file g$k.err; }
done

# An execve of a path that does not exist is let fail as it is: the image's
# file is not finished for it and opened again after (that cost 0.8-1.3 ms a
# failed exec; a program that searches PATH itself fails one in every
# directory but one). The script's failed exec does both.
for k in missing execve; do
	rm -rf st$k.data*
	strace -f -qq -e trace=openat,linkat -o st$k.strace \
		env LD_PRELOAD="$LIB" AUTOPROF_OUTPUT=st$k.data "$P" fail $k >/dev/null 2>&1
	# opened by its name, less the opens that made it: by its name (O_EXCL), or unnamed
	# (O_TMPFILE) and linked, then opened by the name it was given
	opens=$(grep -c "st$k\.data\".*O_WRONLY" st$k.strace)
	made=$(grep -c -e "st$k\.data\".*O_EXCL" -e "linkat(.*st$k\.data\"" st$k.strace)
	echo $((opens - made)) >st$k.n
done
[ "$(cat stmissing.n)" = 0 ] && [ "$(cat stexecve.n)" = 1 ]
ok $? "an exec of a missing path: the file is not finished and opened again for it (opened again $(cat stmissing.n) times; for the script's: $(cat stexecve.n))" ||
	{ grep "st.*\.data" stmissing.strace stexecve.strace | sed 's/^/#   /' >&2; }

# ---- the other threads sample on after a failed exec (they were stopped for
# it and stayed unprofiled, without a word: 0 samples in worker_after) ----
for opt in "" --memory; do
	rm -rf th.data*
	got=$(timeout -s KILL 60 "$A" -q $opt -o th.data -- "$P" threads 2>th.err; echo "status $?")
	after=$(site th.data worker_after)
	[ "$got" = "$(printf 'threads -1 2\nstatus 0')" ] && [ "$after" -gt 0 ]
	ok $? "a failed exec in a thread while two others work${opt:+ ($opt)}: their samples after it ($after)" ||
		{ diag "$got"; diag_file th.err; }
done

# the same when the image had no sample at its exec (it handed its name on and
# went on in the file it left there); AUTOPROF_VERBOSE says whether it did
rm -rf ti.data*
got=$(AUTOPROF_VERBOSE=1 timeout -s KILL 60 "$A" -q -o ti.data -- "$P" threadsidle 2>ti.err
	echo "status $?")
after=$(site ti.data worker_after)
[ "$got" = "$(printf 'threads -1 2\nstatus 0')" ] && [ "$after" -gt 0 ]
ok $? "...also when the image had no sample at the exec: their samples after it ($after)" ||
	{ diag "$got"; diag_file ti.err; }

# a descendant's image (its file removed for the exec: a new one starts): the
# threads are stopped for it; each is sampled again (it started after) or the
# line says how many are not
rm -rf td.data*
got=$(AUTOPROF_TOP=1 timeout -s KILL 60 env AUTOPROF_OUTPUT="$PWD/td.data" LD_PRELOAD="$LIB" \
	"$P" threadsidle 2>td.err; echo "status $?")
tdc=$(ls td.data.* 2>/dev/null | grep -v '\.stat$' | head -1)
tids=$(perf script -i "$tdc" -F tid,ip,sym 2>>perf.err |
	awk 'NF == 1 { tid = $1; next } $2 == "worker_after" { print tid }' | sort -u | wc -l)
said=$(sed -n 's/.*a failed exec started a new file: \([0-9]*\) other thread.*/\1/p' td.err)
[ "$got" = "$(printf 'threads -1 2\nstatus 0')" ] && [ $((tids + ${said:-0})) -ge 2 ]
ok $? "...in a descendant that starts a new file: each worker sampled after it ($tids) or said (${said:-0})" ||
	{ diag "$got"; diag_file td.err; }

# Four threads' execs that fail at once (after the lookup: the script): one
# ending of the image at a time. Both finished the file at once and freed
# its pages twice (SIGSEGV in 2 of 3 runs of 4 x 3000), or collided on the
# control endpoint's temporary name ("no control endpoint", ctl unable to
# reach the process after). The program's output and status are its own
# (how many execs fail varies without us too: this kernel ends a thread
# whose exec races another's, 0-2 of the 4 in 8 runs), the library says
# nothing, ctl reaches it after the storm, and its file goes on.
rm -rf storm.data* storm.go
timeout -s KILL 120 "$A" -q -o storm.data -- "$P" storm 200 >storm.out 2>storm.err &
spid=$!
for i in $(seq 600); do grep -q '^pid ' storm.out && break; sleep 0.1; done
pid=$(sed -n 's/^pid //p' storm.out)
"$A" ctl "${pid:-0}" status >storm.ctl 2>&1
ctl=$?
touch storm.go
wait $spid
rc=$?
after=$(site storm.data after_site)
[ "$rc" = 0 ] && sed 1q storm.out | grep -Eq '^storm [1-9][0-9]* 2$' &&
	[ $ctl = 0 ] && [ ! -s storm.err ] && [ "$after" -gt 0 ]
ok $? "4 threads' failed execs at once: as without us ($(sed 1q storm.out), status $rc), nothing said, ctl status ($ctl), samples after ($after)" ||
	{ diag_file storm.out; diag_file storm.err; diag_file storm.ctl; }

# Threads cancelled while they exec (the exec is no cancellation point, our
# finishing of the file was: a thread cancelled there held the one-ending window
# for good, and every other exec waited, 20 of 20 runs), and a signal handler's
# exec that interrupts fork() (whose atfork handler holds our registry: the
# finish waited for itself, 11 of 20 runs hung). They end as the program says
# (without us, this kernel's racing execs kill a cancel run now and then: 4 of 20).
for m in cancel forksig; do
	rm -rf $m.data*
	got=$(timeout -s KILL 90 env AUTOPROF_OUTPUT=$m.data LD_PRELOAD="$LIB" "$P" $m 2>$m.err
		echo "status $?")
	[ "$got" = "$(printf '%s done\nstatus 0' $m)" ] && ! grep -v 'no hardware PMU' $m.err | grep -q .
	ok $? "execs that are cancelled or interrupt fork(), $m: they end as the program says ($(echo $got | tr '\n' ' ')), nothing said" ||
		diag_file $m.err
done

# The sampling signal taken and given back (SIGPROF, then SIGVTALRM where sampling moved: to
# SIG_IGN and back to SIG_DFL) while another thread's execs fail: a sample queued under the
# number sampling left arrived at the kernel's SIG_DFL and killed the program (2 of 15 runs,
# SIGVTALRM or SIGPROF): that number is held again at once, at any time. 15 runs.
bad=0
for i in $(seq 15); do
	rm -f sigflip.data*
	timeout -s KILL 60 env AUTOPROF_OUTPUT=sigflip.data LD_PRELOAD="$LIB" "$P" sigflip >sigflip.out 2>sigflip.err
	rc=$?
	[ $rc = 0 ] && [ "$(cat sigflip.out)" = "sigflip done" ] &&
		! grep -Ev 'no hardware PMU|profiling moves to signal' sigflip.err | grep -q . ||
		{ bad=$((bad + 1)) && diag "run $i: status $rc" && diag_file sigflip.err; }
done
is "$bad" 0 "SIGPROF and SIGVTALRM to SIG_IGN and back while execs fail, 15 runs: each as without us"

# Threads' execs racing the main thread's exit: a thread whose own sampler another thread was
# flushing for its exec took itself for interrupted inside the profiler, did not wait for that
# exec's end and went through without finishing; the next image was handed counters its exec
# had closed ("AUTOPROF_COUNTER_FDS ... does not name open perf counters": 10 of 100 runs).
# 60 runs (6 of 90 said it before the fix), main's exit at 0-3 ms.
bad=0
for i in $(seq 60); do
	rm -f exitrace.data*
	timeout -s KILL 60 env AUTOPROF_OUTPUT=exitrace.data LD_PRELOAD="$LIB" "$P" exitrace $((i * 97 % 3000)) \
		>exitrace.out 2>exitrace.err
	rc=$?
	{ [ $rc = 5 ] || [ $rc = 42 ]; } && ! grep -v 'no hardware PMU' exitrace.err | grep -q . ||
		{ bad=$((bad + 1)) && diag "run $i: status $rc" && diag_file exitrace.err; }
done
is "$bad" 0 "threads' execs racing an exit, 60 runs: status 5 or 42, nothing said"

# every file reads cleanly
bad=""
for f in *.data*; do
	case $f in *.stat) continue ;; esac
	perf script -i "$f" >/dev/null 2>script.err && [ ! -s script.err ] || bad="$bad $f"
done
[ -z "$bad" ]
ok $? "perf script reads every file without a word${bad:+ (not:$bad)}"

# An exec the kernel refuses for a bad address (a path, an environment or one
# of its strings the process cannot read): the same return and errno as
# without us, by every door (the wrappers read the environment: they faulted,
# SIGSEGV, where the kernel says EFAULT or ENOENT).
"$B/progs/execbad" </dev/null >bad.plain 2>&1
timeout -s KILL 60 env LD_PRELOAD="$LIB" AUTOPROF_OUTPUT=bad.data "$B/progs/execbad" </dev/null >bad.out 2>bad.err
rc=$?
[ $rc = 0 ] && cmp -s bad.plain bad.out
ok $? "execs of bad addresses: output and status as without us ($rc)" || { diag_file bad.out; diag_file bad.err; }
done_testing
