#!/bin/sh
# Windows: AUTOPROF_WINDOW writes one complete perf.data per window, named
# FILE.<UTC yyyymmddThhmmss.mmm> so they sort by time; AUTOPROF_KEEP bounds
# how many are kept; autoprof-report merges any set of them.
# (Every service here ends by itself after its TOTAL_S seconds.)
. "$(dirname "$0")/lib.sh"
needs "$B/progs/service" "$B/autoprof" "$REPORT"
plan 24

SVC=$B/progs/service
# The window files (not the counters' FILE.stat beside the last one).
wins() { ls perf.data.* 2>/dev/null | grep -v '\.stat$'; }
STAMP='[0-9]\{8\}T[0-9]\{6\}\.[0-9]\{3\}'

AUTOPROF_WINDOW=500ms AUTOPROF_QUIET=1 LD_PRELOAD=$LIB "$SVC" 2 2.7 3 >out.txt 2>err.txt
is "$(cat out.txt)" "service: done, 0 interrupted calls" "the service runs as without us"
ok "$([ -s err.txt ] && echo 1 || echo 0)" "nothing on stderr"
wins >files.txt
n=$(wc -l <files.txt)
within "$n" 4 7 "one file per 500 ms window of a 3 s run"
bad=$(grep -vc "^perf.data.$STAMP\$" files.txt)
is "$bad" 0 "every file is named perf.data.<yyyymmddThhmmss.mmm>"
[ ! -e perf.data ]
ok $? "no unstamped perf.data"
# Names sort as the windows' times do: each file's samples start after the one before's.
# (On a loaded machine the last window, after the workers stop, may have no sample:
# only the last; it then holds the counter totals alone.)
prev=
order=0
for f in $(sort files.txt); do
	first=$(perf script -i "$f" -F time 2>/dev/null | grep -m1 '^ *[0-9.]*: *$' | tr -d ' :')
	if [ -z "$first" ]; then
		[ "$f" = "$(sort files.txt | tail -1)" ] || order=1
		continue
	fi
	[ -n "$prev" ] && ! awk -v a="$prev" -v b="$first" 'BEGIN { exit !(b > a) }' &&
		order=1 && diag "$f starts at $first, the one before at $prev"
	prev=$first
done
ok $order "the names sort as the windows' samples do"
warn=0
named=0
total=0
busy=0
for f in $(cat files.txt); do
	[ "$(nsamples "$f")" = 0 ] && continue
	busy=$((busy + 1))
	perf report -i "$f" --stdio --no-children --sort sym >rep.txt 2>rep.err || warn=1
	[ -s rep.err ] && warn=1 && diag_file rep.err
	grep -q 'busy_loop' rep.txt && named=$((named + 1))
	s=$(nsamples "$f") # (perf report's header says "1K" from a thousand on)
	total=$((total + ${s:-0}))
done
is "$warn" 0 "perf report reads every window's file without a warning"
is "$named" "$busy" "in every window's file, even one started seconds after the program, perf report names busy_loop"
last=$(sort files.txt | tail -1)
mid=$(sort files.txt | sed -n 3p)
comms=$(perf script -i "$mid" -F comm 2>/dev/null | awk "{ print \$1 }" | sort -u | tr "\n" " ")
is "$comms" "service " "a later window's threads have their names (COMM records)"
perf script -i "$mid" --show-mmap-events 2>/dev/null | grep -q "PERF_RECORD_MMAP2.*progs/service$"
ok $? "a later window has the program's MMAP2 record"

# autoprof-report merges them: every window's samples, one process, its threads.
"$REPORT" $(cat files.txt) >all.txt 2>all.err
is "$(sed -n 's/^Samples: *//p' all.txt)" "$total" "autoprof-report of all the windows counts each file's samples once ($total)"
is "$(sed -n 's/^Processes: *//p' all.txt)" 1 "one process, though its pid is in every file"
# (its main thread may take a sample or two at its start in a slow VM: it is then the third)
busy_tids=$(for f in $(cat files.txt); do perf script -i "$f" -F tid,ip,sym 2>/dev/null; done |
	awk 'BEGIN { RS = "" } { split($0, l, "\n"); if (l[2] ~ /busy_loop/) print $1 }' | sort -u | wc -l)
threads=$(sed -n 's/^Threads: *//p' all.txt)
[ "$busy_tids" = 2 ] && [ "${threads:-0}" -ge 2 ] && [ "${threads:-0}" -le 3 ]
ok $? "its two sampling threads ($busy_tids in busy_loop, $threads in all)"
"$REPORT" "$mid" "$last" >two.txt 2>two.err
n2=$(($(nsamples "$mid") + $(nsamples "$last")))
is "$(sed -n 's/^Samples: *//p' two.txt)" "$n2" "any two windows merge too ($n2 samples)"

# AUTOPROF_KEEP: the newest N files stay.
mkdir keep && cd keep || exit 1
AUTOPROF_WINDOW=500ms AUTOPROF_KEEP=2 AUTOPROF_QUIET=1 LD_PRELOAD=$LIB "$SVC" 1 2.2 2.5 >/dev/null 2>&1
is "$(wins | wc -l)" 2 "AUTOPROF_KEEP=2: two files are left"
# (the newest window is the run's tail, after the busy phase: under load it may hold no
# sample, which perf report calls an error; perf script then reads it whole)
newest=$(wins | tail -1)
perf report -i "$newest" --stdio >/dev/null 2>rep.err
if grep -q "data has no samples" rep.err; then
	perf script -i "$newest" --show-mmap-events 2>rep.err | grep -q "PERF_RECORD_MMAP2.*progs/service$" &&
		clean_stderr rep.err
else
	clean_stderr rep.err
fi
ok $? "the newest is whole" || diag_file rep.err
cd .. || exit 1

# Timer mode, and a process tree: each process's windows are FILE.PID.<stamp>.
mkdir tree && cd tree || exit 1
t0=$(date +%s)
AUTOPROF_MODE=timer AUTOPROF_WINDOW=1s AUTOPROF_QUIET=1 LD_PRELOAD=$LIB sh -c "$SVC 1 2.2 2.4 & $SVC 1 2.2 2.4; wait" >/dev/null 2>&1
secs=$(($(date +%s) - t0 + 1))
pids=$(wins | sed -n "s/^perf\.data\.\([0-9]*\)\.$STAMP\$/\1/p" | sort -u | wc -l)
is "$pids" 2 "timer mode, a tree: the two children each write perf.data.PID.<stamp> files"
many=$(wins | grep -c "\.$STAMP\$")
# (a window a second each while they run: 2.4 s or more, as long as a slow VM takes)
within "$many" 4 $((2 * (secs + 1))) "two or more windows each, one a second at most ($secs s)"
"$REPORT" perf.data.* >tree.txt 2>/dev/null
procs=$(sed -n 's/^Processes: *//p' tree.txt)
grep -q "busy_loop" tree.txt && [ "$procs" -ge 2 ] && [ "$procs" -le 3 ]
ok $? "autoprof-report merges a tree's windows (the two services, and sh if it was sampled)" ||
	diag_file tree.txt
cd .. || exit 1

# An idle service: its window ends at `autoprof ctl PID dump`, with every sample in it.
mkdir idle && cd idle || exit 1
AUTOPROF_WINDOW=1s AUTOPROF_QUIET=1 LD_PRELOAD=$LIB "$SVC" 2 0.6 4 >/dev/null 2>&1 &
pid=$!
sleep 2.5
before=$(wins | wc -l)
"$B/autoprof" ctl $pid dump >dump.txt 2>&1
n_status=$(sed -n 's/^pid [0-9]*: \([0-9]*\) samples so far.*/\1/p' dump.txt)
after=$(wins | wc -l)
first=$(wins | head -1)
is "$before $after" "1 2" "idle past its window: one file; after ctl dump the window is ended (a new file)"
is "$(nsamples "$first")" \
	"$n_status" "the ended window's file holds every sample taken ($n_status), blocked threads' too"
wait $pid
cd .. || exit 1

# Bad values: one line naming it; the launcher refuses to run.
AUTOPROF_WINDOW=5x LD_PRELOAD=$LIB "$SVC" 0 0 0 >/dev/null 2>bad.txt
grep -q "AUTOPROF_WINDOW='5x' is not a duration" bad.txt && [ "$(wc -l <bad.txt)" = 1 ]
ok $? "AUTOPROF_WINDOW=5x: one line" || diag_file bad.txt
"$B/autoprof" --window 10 --keep -1 -- true >/dev/null 2>bad2.txt
is "$?" 2 "the launcher refuses a bad --keep with status 2"
"$B/autoprof" --window 50ms -- true >/dev/null 2>bad3.txt
grep -q "window.*AUTOPROF_WINDOW='50ms' is not a duration from 100ms" bad3.txt
ok $? "a window shorter than 100 ms is refused" || diag_file bad3.txt
