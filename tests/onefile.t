#!/bin/sh
# One run, one file (issue 24): under the launcher, -o FILE holds the whole
# run, every process and exec'd image, as perf record writes it, and perf
# report, perf script, hotspot's parser and autoprof-report read it; the
# per-image files stay available by --per-process, and autoprof-report reads
# a bare LD_PRELOAD run's tree from its first file.
. "$(dirname "$0")/lib.sh"
needs "$B/autoprof" "$REPORT" "$LIB" "$B/progs/split"
P=$B/progs
plan 33

# files BASE: the per-image profiles named after BASE (no .stat, no .old).
files() { ls "$1" "$1".[0-9]* 2>/dev/null | grep -v '\.stat$' | tr '\n' ' ' | sed 's/ $//'; }
# rsamples FILE...: the Samples line of autoprof-report FILE...
rsamples() { "$REPORT" "$@" 2>/dev/null | awk '/^Samples:/ { print $2; exit }'; }
# sum_samples FILE...: perf script's samples, summed over the files.
sum_samples() {
	_s=0
	for _f in "$@"; do _s=$((_s + $(nsamples "$_f"))); done
	echo $_s
}

# 1-6: a shim, as pyenv's: a shell script that works a little, then execs the program.
mkdir bin
cat >bin/split <<EOF
#!/bin/sh
i=0; while [ \$i -lt 40000 ]; do i=\$((i + 1)); done
exec "$P/split" "\$@"
EOF
chmod +x bin/split
PATH=$T/bin:$PATH timeout -s KILL 60 "$B/autoprof" -o s.data -- split 300 >s.out 2>s.err
is "$? $(ls s.data* | tr '\n' ' ')" "0 s.data s.data.stat " \
	"shim: exit status 0; s.data and its counters s.data.stat hold the run, nothing beside them"
perf report -i s.data --stdio --no-children --sort dso 2>rep.err >rep.txt
sh_dso=$(basename "$(readlink -f /bin/sh)")
grep -q '% *split *$' rep.txt && grep -q "% *$sh_dso *\$" rep.txt && clean_stderr rep.err
ok $? "shim: perf report reads it cleanly and finds both images: the script's shell ($sh_dso) and split" ||
	{ diag_file rep.txt; diag_file rep.err; }
n=$(nsamples s.data)
sum=$(awk '/^autoprof:     pid/ { s += $4 } END { print s + 0 }' s.err)
grep -q "^autoprof: wrote s.data ($n samples" s.err && grep -q "it holds 2 process images" s.err &&
	[ "$sum" = "$n" ]
ok $? "shim: the closing lines name s.data ($n samples in perf script) and each image, adding up ($sum)" ||
	diag_file s.err
perf report -i s.data --header-only 2>/dev/null | grep -q '^# cmdline : autoprof split 300 *$'
ok $? "shim: the file's command line is the command as given" ||
	perf report -i s.data --header-only 2>&1 | grep cmdline
if [ -x "$PERFPARSER" ]; then
	"$PERFPARSER" --input s.data --print-stats >pp.txt 2>&1
	grep -q "^samples: $sum\$" pp.txt && grep -q '^samples time violations: 0$' pp.txt &&
		grep -q '^mmaps time violations: 0$' pp.txt
	ok $? "shim: hotspot's parser reads every sample ($sum), in time order" || diag_file pp.txt
else
	skip "hotspot-perfparser is not installed"
fi
is "$(rsamples s.data)" "$sum" "shim: autoprof-report s.data counts the run's samples"

# 7-9: a tree of fork and exec: every process in the one file.
timeout -s KILL 60 "$B/autoprof" -o t.data -- sh -c "$P/split 200 >/dev/null & $P/split 150 >/dev/null; wait" \
	>/dev/null 2>t.err
is "$(files t.data)" "t.data" "tree: one file"
is "$(perf script -i t.data -F comm,pid 2>/dev/null | awk '$1 == "split" { print $2 }' | sort -u | wc -l)" 2 \
	"tree: perf script finds both children's samples in it"

# (CPU-time timers measure the period each image delivered: the merged attr gets the
# average, so autoprof-report counts samples, not aggregated records)
timeout -s KILL 60 "$B/autoprof" -q --mode timer -o tm.data -- sh -c "$P/split 200 >/dev/null & $P/split 150 >/dev/null; wait" \
	>/dev/null 2>&1
n=$(nsamples tm.data)
[ "$(files tm.data)" = tm.data ] && [ "$n" -gt 0 ] && [ "$(rsamples tm.data)" = "$n" ]
ok $? "tree with CPU-time timers: one file; autoprof-report counts its $n samples"

# 10: perf record's file is one per run; per-image files stay by a switch.
timeout -s KILL 60 "$B/autoprof" --per-process -o pp.data -- sh -c "$P/split 100 >/dev/null & $P/split 100 >/dev/null; wait" \
	>/dev/null 2>pp.err
a=$(files pp.data | wc -w)
AUTOPROF_PER_PROCESS=1 timeout -s KILL 60 "$B/autoprof" -o pv.data -- sh -c "$P/split 100 >/dev/null & $P/split 100 >/dev/null; wait" \
	>/dev/null 2>pv.err
b=$(files pv.data | wc -w)
[ "$a" -ge 3 ] && [ "$b" -ge 3 ] && ! grep -q 'unknown' pp.err pv.err
ok $? "--per-process and AUTOPROF_PER_PROCESS=1 keep one file per process image ($a, $b)" ||
	{ diag_file pp.err; diag_file pv.err; }

# 11: the command killed by a signal: the merge happens all the same.
timeout -s KILL 60 "$B/autoprof" -q -o k.data -- sh -c "$P/split 200 >/dev/null; kill -TERM \$\$" >/dev/null 2>&1
rc=$?
[ $rc = 143 ] && [ "$(files k.data)" = k.data ] &&
	perf script -i k.data -F comm 2>/dev/null | grep -q split
ok $? "a command killed by SIGTERM: its status (143) and one file with the child's samples ($rc)"

# 12: a process that outlives the command keeps its own file, said in one line.
timeout -s KILL 60 "$B/autoprof" -o o.data -- sh -c "($P/split 1500 >/dev/null &); $P/split 100 >/dev/null" \
	>/dev/null 2>o.err
grep -q "^autoprof: 1 process of the run outlives the command: its own file stays beside o.data" o.err
ok $? "a process outliving the command: one line says its file stays" || diag_file o.err
i=0
while pgrep -f "$P/split 1500" >/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done

# 13: an earlier run's file beside the output is neither merged nor removed.
# (z.data.4343 was written a moment ago, as by a run just before: its records are older)
cp t.data z.data.4242 && touch -d '1 hour ago' z.data.4242 && md5=$(md5sum <z.data.4242)
cp t.data z.data.4343 && touch z.data.4343
timeout -s KILL 60 "$B/autoprof" -q -o z.data -- sh -c "$P/split 100 >/dev/null & $P/split 100 >/dev/null; wait" \
	>/dev/null 2>&1
[ "$(files z.data)" = "z.data z.data.4242 z.data.4343" ] && [ "$(md5sum <z.data.4242)" = "$md5" ] &&
	[ "$(perf script -i z.data -F comm,pid 2>/dev/null | awk '$1 == "split" { print $2 }' | sort -u | wc -l)" = 2 ]
ok $? "earlier runs' z.data.4242 and z.data.4343 stay as they were, z.data holds this run's two children"

# 14: the launcher killed (SIGKILL) before it merged: the per-image files stay, readable,
# and autoprof-report reads them all from the first.
"$B/autoprof" -q -o x.data -- sh -c "$P/split 100 >/dev/null; $P/split 600 >/dev/null" >/dev/null 2>&1 &
lp=$!
i=0
while ! pgrep -f "$P/split 600" >/dev/null && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
sleep 0.2
kill -KILL $lp
wait $lp 2>/dev/null
i=0
while pgrep -f "$P/split 600" >/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
sleep 0.2
set -- $(files x.data)
bad=0
for f in "$@"; do perf script -i "$f" >/dev/null 2>x.err && clean_stderr x.err || bad=$((bad + 1)); done
want=$(sum_samples "$@")
is "$# $bad $(rsamples x.data)" "3 0 $want" \
	"the launcher killed: 3 files, each readable; autoprof-report x.data reads all ($want samples)"

# 15-18: a bare LD_PRELOAD run writes one file per image; autoprof-report reads its tree
# from the first file, and leaves out (with a warning) an earlier run's file beside it.
AUTOPROF_QUIET=1 AUTOPROF_OUTPUT=b.data LD_PRELOAD=$LIB sh -c "$P/split 100 >/dev/null; $P/split 150 >/dev/null"
set -- $(files b.data)
want=$(sum_samples "$@")
is "$# $(rsamples b.data)" "3 $want" "a bare run: 3 files; autoprof-report b.data reads all ($want samples)"
cp "$3" b.data.4242 && touch -d '1 hour ago' b.data.4242
"$REPORT" b.data >b.txt 2>b.err
[ "$(awk '/^Samples:/ { print $2; exit }' b.txt)" = "$want" ] &&
	grep -q "warning: b.data.4242 is not of b.data's run (written before it started): left out" b.err
ok $? "an earlier run's b.data.4242: left out, said in one line" || diag_file b.err
rm b.data.4242

# (a shell that takes no sample hands its name to the program it execs: the first file
# starts at that exec, after the child that ran before it; FILE.stat dates the run)
AUTOPROF_QUIET=1 AUTOPROF_OUTPUT=h.data LD_PRELOAD=$LIB sh -c "$P/split 100 >/dev/null; sleep 0.3; exec $P/split 200 >/dev/null"
set -- $(files h.data)
hwant=$(sum_samples "$@")
"$REPORT" h.data >h.txt 2>h.err
# (2 files, or 3 when the forked sleep took a sample of its own)
is "$(($# >= 2)) $(awk '/^Samples:/ { print $2; exit }' h.txt) $(wc -c <h.err)" "1 $hwant 0" \
	"a bare run whose shell execs its program: autoprof-report reads the child that ran before the exec"

# (--diff of two bare runs: each side's tree from its first file)
"$REPORT" --diff b.data h.data >d.txt 2>d.err
# (four files or more are named "..., and N more": a fork that sampled before its exec)
grep -Eq "^Baseline: b.data(, b.data.[0-9.]+)+( and [0-9]+ more)? \(.*, $want samples\)" d.txt &&
	grep -Eq "^New: *h.data(, h.data.[0-9.]+)+( and [0-9]+ more)? \(.*, $hwant samples\)" d.txt
ok $? "--diff b.data h.data: each side's whole run ($want and $hwant samples)" ||
	{ diag_file d.txt; diag_file d.err; }

# 19-20: autoprof merge: a bare run's files into one file for perf and hotspot.
"$B/autoprof" merge -o m.data b.data 2>m.err
is "$(nsamples m.data)" "$want" "autoprof merge -o m.data b.data: the samples of the 3 files, in one" ||
	diag_file m.err
perf report -i m.data --stdio >/dev/null 2>mr.err && clean_stderr mr.err &&
	[ "$(perf script -i m.data -F comm,pid 2>/dev/null | awk '$1 == "split" { print $2 }' | sort -u | wc -l)" = 2 ]
ok $? "the merged file reads cleanly in perf report, both programs in it" || diag_file mr.err

# 21-26: --window under the launcher: one file per window, every process of the run
# in it (windows count from the launcher's start in every process), merged as each
# window ends; --on-window gets the merged files.
mkdir got
AUTOPROF_VERBOSE=1 timeout -s KILL 90 "$B/autoprof" --window 1s --on-window 'cp -t got' -o w.data -- \
	sh -c "$P/split 1500 >/dev/null & $P/split 1200 >/dev/null; wait" >w.out 2>w.err
wfiles=$(ls w.data.* | grep -v '\.stat$' | tr '\n' ' ')
# the window files named as the first process names its windows
set -- $(ls w.data.* | grep '^w\.data\.[0-9]\{8\}T[0-9]\{6\}\.[0-9]\{3\}$')
both=0
for f in "$@"; do
	[ "$(perf script -i "$f" -F comm,pid 2>/dev/null | awk '$1 == "split" { print $2 }' | sort -u | wc -l)" = 2 ] &&
		both=$((both + 1))
done
[ "$wfiles" = "$* " ] && [ $# -ge 2 ] && [ $both -ge 1 ]
ok $? "--window 1s over a fork tree: $# files, each named w.data.<window's start>, $both holding both processes" ||
	{ diag "$wfiles"; diag_file w.err; }
bad=
for f in "$@"; do
	perf script -i "$f" -F comm,pid >ws.txt 2>ws.err && clean_stderr ws.err || bad="$bad $f"
	awk '$1 == "split" { print $2 }' ws.txt >>pids.txt
done
[ -z "$bad" ] && [ "$(sort -u pids.txt | wc -l)" = 2 ]
ok $? "perf script reads every window file cleanly, both programs' samples in them" ||
	{ diag "$bad"; diag_file ws.err; }
if [ -x "$PERFPARSER" ]; then
	bad=
	pps=0
	for f in "$@"; do
		"$PERFPARSER" --input "$f" --print-stats >pp.txt 2>&1
		grep -q '^samples time violations: 0$' pp.txt && grep -q '^mmaps time violations: 0$' pp.txt ||
			bad="$bad $f"
		pps=$((pps + $(awk '/^samples: / { print $2 }' pp.txt)))
	done
	[ -z "$bad" ] && [ "$pps" = "$(awk '/^autoprof: wrote [0-9]+ samples of/ { s += $3 } END { print s + 0 }' w.err)" ]
	ok $? "hotspot's parser reads every window file in time order, every sample ($pps)" ||
		{ diag "$bad"; diag_file pp.txt; }
else
	skip "hotspot-perfparser is not installed"
fi
# the samples each process says it wrote (AUTOPROF_VERBOSE's closing line), all in the windows
wrote=$(awk '/^autoprof: wrote [0-9]+ samples of/ { s += $3 } END { print s + 0 }' w.err)
is "$(sum_samples "$@")" "$wrote" "the windows hold every sample the processes wrote ($wrote)"
is "$(rsamples "$@")" "$wrote" "autoprof-report over the windows counts them too"
# the hook: once per merged window file, given the merged file as it stays
hooked=0
for f in "$@"; do cmp -s "$f" "got/$f" && hooked=$((hooked + 1)); done
is "$hooked $(ls got | wc -l)" "$# $#" "--on-window ran once for each merged window file, with that file" ||
	{ ls -l . got | sed 's/^/# /'; diag_file w.err; }

# 27-28: windows merged as they end, while the run goes on: a child asleep past a
# window's end (sleep) is asked to end it; the command sees the hook's first file.
timeout -s KILL 90 "$B/autoprof" --window 1s --on-window 'echo >>hk.log' -o i.data -- \
	sh -c "$P/split 2500 >/dev/null & sleep 20 & s=\$!; i=0
	       while [ ! -s hk.log ] && [ \$i -lt 80 ]; do sleep 0.1; i=\$((i + 1)); done
	       cp hk.log during.log; kill \$s; wait" >i.out 2>i.err
first=$(head -n 1 during.log 2>/dev/null)
echo "$first" | grep -q "/i\.data\.[0-9]\{8\}T[0-9]\{6\}\.[0-9]\{3\}\$" &&
	perf script -i "$first" -F comm 2>/dev/null | grep -q split
ok $? "the first window's merged file went to the hook while the command ran (a child asleep in it)" ||
	{ diag "first: $first"; diag_file i.err; }
is "$(ls i.data.* | grep -v '\.stat$' | grep -vc '^i\.data\.[0-9]\{8\}T[0-9]\{6\}\.[0-9]\{3\}$')" 0 \
	"no per-process window file stays beside them" || ls i.data.* | sed 's/^/# /'

# 29: --aggregate windows merge alike (records that stand for many samples).
AUTOPROF_VERBOSE=1 timeout -s KILL 90 "$B/autoprof" --aggregate --window 1s -o g.data -- \
	sh -c "$P/split 700 >/dev/null & $P/split 600 >/dev/null; wait" >g.out 2>g.err
set -- $(ls g.data.* | grep '^g\.data\.[0-9]\{8\}T[0-9]\{6\}\.[0-9]\{3\}$')
gwrote=$(awk '/^autoprof: wrote [0-9]+ samples of/ { s += $3 } END { print s + 0 }' g.err)
both=0
for f in "$@"; do
	[ "$(perf script -i "$f" -F comm,pid 2>/dev/null | awk '$1 == "split" { print $2 }' | sort -u | wc -l)" = 2 ] &&
		both=$((both + 1))
done
[ "$(ls g.data.* | grep -v '\.stat$' | wc -l)" = $# ] && [ $both -ge 1 ] && [ "$(rsamples "$@")" = "$gwrote" ]
ok $? "--aggregate --window: $# window files, $both with both processes, autoprof-report counts the $gwrote samples written" ||
	{ ls g.data.* | sed 's/^/# /'; "$REPORT" "$@" 2>&1 | head -3 | sed 's/^/# /'; diag_file g.err; }

# 30: the shim with windows: the exec'd program's windows keep the run's names, and
# the counter totals (the first process's last image's) are the last window's .stat.
PATH=$T/bin:$PATH timeout -s KILL 60 "$B/autoprof" --window 500ms -o sw.data -- split 800 >sw.out 2>sw.err
# (On a loaded machine the last window, the run's tail after split's work, may hold no sample:
# a window ends at the first sample past its end, which goes to the window that ends. Its
# samples are then the window's before.)
last=$(ls sw.data.* | grep -v '\.stat$' | tail -n 1)
before=$(ls sw.data.* | grep -v '\.stat$' | tail -n 2 | head -n 1)
perf script -i "$last" -F comm >sw.comm 2>/dev/null
[ -s sw.comm ] || perf script -i "$before" -F comm >sw.comm 2>/dev/null
[ "$(ls sw.data.* | grep -vc '^sw\.data\.[0-9]\{8\}T[0-9]\{6\}\.[0-9]\{3\}\(\.stat\)\?$')" = 0 ] &&
	[ "$(ls sw.data.*.stat)" = "$last.stat" ] && grep -q split sw.comm
ok $? "a shim with --window 500ms: window files named after the run, one .stat, the last window's" ||
	{ ls sw.data.* | sed 's/^/# /'; diag_file sw.err; }

# 31-32: a process of the tree that runs without the library when the command
# ends (here a static program's child, exec'd without LD_PRELOAD, that execs a
# preloaded program later) is waited for a moment, then counted and said apart;
# its file comes after. (CI saw a fork of sh not yet exec'd missing from the line.)
# (the forker returns once its child has exec'd: the pipe's end closes on exec)
printf '%s\n' '#define _GNU_SOURCE' '#include <fcntl.h>' '#include <stdlib.h>' '#include <unistd.h>' \
	'int main(int c, char **v) { int p[2]; char x; if (c < 2 || pipe2(p, O_CLOEXEC)) return 1;' \
	'  if (fork() == 0) { unsetenv("LD_PRELOAD"); execv(v[1], v + 1); _exit(127); }' \
	'  close(p[1]); return read(p[0], &x, 1) != 0; }' \
	>forker.c
if cc -static -O2 -o forker-static forker.c 2>cc.err; then
	timeout -s KILL 60 "$B/autoprof" -o u.data -- sh -c "./forker-static /bin/sh -c 'sleep 0.8; exec env LD_PRELOAD=$LIB $P/split 200 >/dev/null'; true" \
		>/dev/null 2>u.err
	grep -q "^autoprof: [12] process.* of the run outlives\{0,1\} the command: .* beside u.data .*; [12] of them ha[sv]e\{0,1\} not started the library yet: no file if" u.err
	ok $? "a process without the library when the command ends: waited for, counted, said apart" || diag_file u.err
	i=0
	while [ "$(ls u.data.[0-9]* 2>/dev/null | grep -vc '\.stat$')" = 0 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	pid=$(ls u.data.[0-9]* 2>/dev/null | grep -v '\.stat$' | sed 's/^u\.data\.//')
	while [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
	[ -n "$pid" ] && perf script -i "u.data.$pid" -F comm 2>/dev/null | grep -q split
	ok $? "... and its own file comes beside u.data (u.data.$pid)" || ls u.data* | sed 's/^/# /'
else
	skip "no static C toolchain: $(head -1 cc.err)"
	skip "no static C toolchain"
fi

# 33: one of the tree whose endpoint is elsewhere (its own XDG_RUNTIME_DIR) runs the
# library: counted at once, not said as one that has not started it.
mkdir -p xdg
timeout -s KILL 60 "$B/autoprof" -o x.data -- sh -c "XDG_RUNTIME_DIR=$T/xdg sleep 1 & sleep 0.3" >/dev/null 2>x.err
grep -q "^autoprof: 1 process of the run outlives the command: its own file stays beside x.data (autoprof-report x.data reads it too)$" x.err
ok $? "a process of the run with its endpoint elsewhere: counted as one that runs the library" || diag_file x.err

done_testing
