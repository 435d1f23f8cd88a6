#!/bin/sh
# top.t - `autoprof top` in a real terminal (tmux: send-keys, capture-pane):
# the hottest functions of a command or of -p PID, refreshed every second,
# by self and (t) by total, q and Ctrl-C to quit, no file unless -o (issue 24).
. "$(dirname "$0")/lib.sh"
needs "$B/autoprof" "$B/progs/split"
if ! command -v tmux >/dev/null 2>&1; then
	echo "1..0 # SKIP tmux is not installed (scripts/install-deps.sh test)"
	exit 0
fi
plan 21
A=$B/autoprof
S=autoprof-top-$$
export TMUX_TMPDIR="$T"
trap 'tmux kill-server 2>/dev/null; rm -rf "$T"' EXIT

# pane: the screen now. wait_for TEXT: until the screen shows TEXT (10 s at most).
pane() { tmux capture-pane -p -t "$S"; }
wait_for() {
	i=0
	while ! pane | grep -q -- "$1" && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	pane | grep -q -- "$1"
}
# row FUNCTION COLUMN: the function's self (1) or total (2) percentage on screen.
row() { pane | awk -v f="$1" -v c="$2" '$3 == f { sub(/%/, "", $c); print $c; exit }'; }

ls /tmp >tmp-before.txt
tmux new-session -d -s "$S" -x 100 -y 30 \
	"cd '$T' && timeout --foreground -s KILL 60 '$A' top -- '$B/progs/split' 30000 2>top.err; echo EXIT=\$? >top.status; sleep 30"
tmux pipe-pane -t "$S" -o "cat >>'$T/tmp-raw.out'"
wait_for "heavy_two_thirds"
ok $? "autoprof top -- split: the hot functions on screen" || pane | sed 's/^/#   /' >&2
sleep 2.2
n1=$(pane | sed -n 's/^\([0-9]*\) samples.*/\1/p')
sleep 1.5
n2=$(pane | sed -n 's/^\([0-9]*\) samples.*/\1/p')
[ -n "$n1" ] && [ -n "$n2" ] && [ "$n2" -gt "$n1" ]
ok $? "refreshed every second ($n1, then $n2 samples)"
within "$(row heavy_two_thirds 1)" 55 78 "heavy_two_thirds's self share, as split spends it (2/3)"
within "$(row light_one_third 1)" 22 45 "light_one_third's self share (1/3)"
# Each refresh is drawn over the last screen, never on a cleared one: a look
# at any moment sees a whole screen (CI once caught one between the clear and
# the header).
i=0 whole=0
while [ $i -lt 40 ]; do
	pane >tmp-look.txt
	grep -q "sorted by self" tmp-look.txt && grep -q "self *total *function" tmp-look.txt && whole=$((whole + 1))
	i=$((i + 1))
	sleep 0.05
done
frames=$(grep -c "sorted by" tmp-raw.out)
[ "$whole" = 40 ] && [ "$frames" -ge 3 ] && ! grep -q "$(printf '\033')\[2J" tmp-raw.out
ok $? "sorted by self at first, on every look ($whole of 40), no screen cleared between $frames screens"
first=$(pane | awk '/self +total +function/ { getline; print $3; exit }')
is "$first" heavy_two_thirds "the hottest function first"
tmux send-keys -t "$S" t
wait_for "sorted by total"
ok $? "t: sorted by total"
within "$(row main 2)" 99 100 "main's total share is 100%"
within "$(row work_loop 2)" 99 100 "work_loop's too"
tmux send-keys -t "$S" s
wait_for "sorted by self"
ok $? "s: back to self"
n1=$(pane | sed -n 's/^\([0-9]*\) samples.*/\1/p')
tmux send-keys -t "$S" z
sleep 1.5
n2=$(pane | sed -n 's/^\([0-9]*\) samples.*/\1/p')
[ -n "$n1" ] && [ -n "$n2" ] && [ "$n2" -lt "$n1" ] && [ "$n2" -lt 1800 ] && pane | grep -q heavy_two_thirds
ok $? "z: the counts start over ($n1 samples, then $n2)"
tmux send-keys -t "$S" q
i=0
while [ ! -s top.status ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
is "$(cat top.status 2>/dev/null)" EXIT=0 "q quits (exit 0), the command stopped with it"
grep -q "^autoprof: top: [0-9]* samples$" top.err
ok $? "one closing line" || diag_file top.err
ls /tmp >tmp-after.txt
[ -z "$(ls "$T" | grep -v -e '^top\.' -e '^tmp-' -e '^tmux')" ] &&
	[ -z "$(diff tmp-before.txt tmp-after.txt | grep autoprof-top)" ]
ok $? "no file left behind without -o" || ls "$T" | sed 's/^/#   /' >&2
tmux kill-session -t "$S"

# -p PID, Ctrl-C, -o FILE: the process goes on, the file is a complete perf.data.
"$B/progs/split" 30000 >/dev/null &
pid=$!
tmux new-session -d -s "$S" -x 100 -y 30 \
	"cd '$T' && timeout --foreground -s KILL 60 '$A' top -o p.data -p $pid 2>top2.err; echo EXIT=\$? >top2.status; sleep 30"
wait_for "light_one_third"
ok $? "autoprof top -p PID: its hot functions on screen" || pane | sed 's/^/#   /' >&2
tmux send-keys -t "$S" C-c
i=0
while [ ! -s top2.status ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
kill -0 $pid 2>/dev/null
st=$?
kill $pid
is "$(cat top2.status 2>/dev/null):$st" "EXIT=0:0" "Ctrl-C quits (exit 0); the process goes on"
perf report -i p.data --stdio --no-children --sort sym 2>rep.err | grep -q heavy_two_thirds &&
	grep -q "wrote p.data" top2.err
ok $? "-o p.data: the samples in a file perf reads" || diag_file rep.err

# Without a terminal (a pipe): the screens go to stdout and the view ends with
# the command; a forked child's functions are named from its own image.
timeout -s KILL 60 "$A" top -- sh -c "'$B/progs/split' 1200; true" </dev/null >screens.txt 2>top3.err
is "$?" 0 "without a terminal, top ends with the command (exit 0)"
# (the last screen: from its header on; not its last lines, which under load are a long
# tail of functions with a sample each)
awk '/autoprof top: / { s = "" } { s = s $0 "\n" } END { printf "%s", s }' screens.txt >last.txt
grep -q "heavy_two_thirds" last.txt && grep -q "it ended" last.txt
ok $? "its last screen names the child's functions and says the command ended" ||
	{ head -n 12 last.txt | sed 's/^/#   /' >&2 && diag_file top3.err; }
"$A" top -o none.data -- /nonexistent/prog </dev/null >out.txt 2>err.txt
is "$?" 127 "a command that does not exist: exit 127"
[ "$(grep -c '' err.txt)" = 1 ] && grep -q "cannot run '/nonexistent/prog'" err.txt && [ ! -e none.data ]
ok $? "one line naming it, and no file" || diag_file err.txt
done_testing
