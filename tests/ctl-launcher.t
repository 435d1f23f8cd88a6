#!/bin/sh
# `autoprof ctl` on the launcher's pid in library mode, as a user drives it
# from a shell: `autoprof --start-paused -- CMD &` then `autoprof ctl $! start`
# ($! is the launcher): the request reaches every process of the run the
# library profiles; the launcher says which pid it profiles; an exec'd image
# goes on as its parent was left (started or stopped).
. "$(dirname "$0")/lib.sh"
needs "$B/progs/service" "$B/autoprof"
plan 20

A=$B/autoprof
SVC=$B/progs/service
DIR=$(ctl_dir)

field() { sed -n "s/^$1: \([0-9]*\).*/\1/p" "$2"; }

# One process: the service, started paused under the launcher.
"$A" --start-paused -o l.data -- "$SVC" 1 1.5 3 >l.out 2>l.err &
L=$!
until_ok "$A" ctl $L status
ok $? "ctl on the launcher's pid answers" || diag_file l.err
child=$(sed -n 's/^autoprof: profiling pid \([0-9]*\), paused until `autoprof ctl '$L' start`.*/\1/p' l.err)
ppid=$(awk '{ print $4 }' /proc/"$child"/stat 2>/dev/null)
is "$ppid" "$L" "started paused, the launcher names the pid it profiles, its child, on stderr"
"$A" ctl $L status >st0.txt 2>&1
grep -q "^pid $child: sampling off" st0.txt &&
	grep -q "^run of launcher $L: 1 profiled process (0 sampling), 0 samples (0 lost)" st0.txt
ok $? "status on the launcher: the child's status, then the run's totals" || diag_file st0.txt
"$A" ctl $L start >start.txt 2>&1
rc=$?
[ $rc = 0 ] && grep -q "^pid $child: sampling started; file $T/l.data\$" start.txt
ok $? "start on the launcher's pid starts the profiled child" || diag_file start.txt
sleep 1
"$A" ctl $L stop >stop.txt 2>&1
grep -q "^pid $child: sampling stopped; [0-9]* samples so far are in $T/l.data\$" stop.txt
ok $? "stop on the launcher's pid stops it" || diag_file stop.txt
"$A" ctl $L status >st1.txt 2>&1
n_status=$(sed -n 's/^run of launcher .* sampling), \([0-9]*\) samples.*/\1/p' st1.txt)
within "$n_status" 1 1000000 "samples were taken between start and stop"
is "$(nsamples l.data)" "$n_status" "after stop, the file holds every sample the run's status counts"
wait $L
is $? 0 "the launcher ends as its command did"
[ ! -e "$DIR/$L" ]
ok $? "the launcher's endpoint is gone with it"
"$A" ctl $L status >gone.txt 2>&1
[ $? = 1 ] && [ "$(wc -l <gone.txt)" = 1 ]
ok $? "after the run, one line and status 1" || diag_file gone.txt

# From outside too, the launcher names the pid it profiles when started paused.
"$A" --outside --start-paused -o o.data -- "$SVC" 1 0.1 0.3 >/dev/null 2>o.err &
L=$!
wait $L
grep -q "^autoprof: profiling pid [0-9]*, paused until \`autoprof ctl [0-9]* start\` (or \`autoprof ctl $L start\`, this launcher)\$" o.err
ok $? "--outside --start-paused: the launcher names the pid it profiles" || diag_file o.err

# At once after the launch, as a script would: ctl waits for the launcher and its
# command to be there (up to 2 s).
"$A" --start-paused -q -o i.data -- "$SVC" 1 0.3 1 >/dev/null 2>&1 &
"$A" ctl $! start >i.txt 2>&1
rc=$?
[ $rc = 0 ] && grep -q "^pid [0-9]*: sampling started; file $T/i.data\$" i.txt
ok $? "\`autoprof ... & autoprof ctl \$! start\` at once starts the command" || diag_file i.txt
wait

# A tree: a shell that runs two services (and is profiled itself).
"$A" --start-paused -o t.data -- \
	sh -c "$SVC 1 1.5 3.5 & $SVC 1 1.5 3.5; wait" >t.out 2>t.err &
L=$!
until_ok sh -c "[ \$(\"$A\" ctl $L status | grep -c '^pid .*: sampling off') -ge 3 ]"
"$A" ctl $L start >tstart.txt 2>&1
is "$(grep -c '^pid [0-9]*: sampling started; file ' tstart.txt)" 3 \
	"start on the launcher starts every profiled process of the run: the shell and both services"
sleep 0.5
"$A" ctl $L dump >tdump.txt 2>&1
is "$(grep -c '^pid [0-9]*: [0-9]* samples so far are in .* (complete: perf report -i ' tdump.txt)" 3 \
	"dump on the launcher: every profiled process's file is complete now"
sleep 0.5
"$A" ctl $L stop >tstop.txt 2>&1
is "$(grep -c '^pid [0-9]*: sampling stopped; ' tstop.txt)" 3 "stop stops all three"
"$A" ctl $L status >tst.txt 2>&1
total=$(sed -n 's/^run of launcher .* sampling), \([0-9]*\) samples.*/\1/p' tst.txt)
sum=0
for f in $(sed -n 's/^pid [0-9]*: sampling stopped; [0-9]* samples so far are in //p' tstop.txt); do
	sum=$((sum + $(nsamples "$f")))
done
within "$total" 1 1000000 "the run's status counts samples from its processes"
is "$sum" "$total" "the processes' files hold every sample the run's status counts"
wait $L
is $? 0 "the tree's run ends normally"

# An image exec'd after `ctl start` goes on sampling (AUTOPROF_START=0 stays the
# launcher's setting only until ctl changes it).
mkfifo go
"$A" --start-paused -q -o e.data -- \
	sh -c "read x <go; exec $SVC 1 0.5 2" >e.out 2>e.err &
L=$!
until_ok "$A" ctl $L status
"$A" ctl $L start >/dev/null 2>&1
echo go >go
until_ok sh -c "\"$A\" ctl $L status >est.txt 2>&1 && grep -q 'from [2-9] threads' est.txt"
grep -q "^pid [0-9]*: sampling on since" est.txt
ok $? "the image the started shell exec'd is sampling too" || diag_file est.txt
wait $L

# ... and one exec'd after `ctl stop` stays stopped (library mode, the same pid).
mkfifo go2
AUTOPROF_QUIET=1 AUTOPROF_OUTPUT=x.data LD_PRELOAD=$LIB sh -c "read x <go2; exec $SVC 1 0.5 1.5" >x.out 2>&1 &
P=$!
until_ok "$A" ctl $P status
"$A" ctl $P stop >/dev/null 2>&1
"$A" ctl $P status >xst0.txt 2>&1
echo go >go2
# the exec'd image answers: the service's threads, not the shell's one
until_ok sh -c "\"$A\" ctl $P status >xst.txt 2>&1 && grep -q 'from [2-9] threads' xst.txt"
grep -q "^pid $P: sampling off since" xst.txt
ok $? "the image a stopped process exec'd is stopped too" || diag_file xst.txt
wait $P
done_testing
