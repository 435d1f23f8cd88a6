#!/bin/sh
# memory-library.t - the allocator's wrappers live in libautoprof-memory.so,
# preloaded only for memory profiles (issues 25, 26): a CPU-only run leaves
# the program's malloc and free bound to libc (it pays nothing for them),
# --memory and LD_PRELOAD="libautoprof.so libautoprof-memory.so" bind them
# to the wrappers, and so do the run's children (an environment of their
# own included); a library missing is one line, the program runs as
# without us, and the file says there is no memory profile.
# tests/progs/membind prints where its calls are bound ("BIND malloc FILE")
# and leaks 1 MiB at leak_here; "child" runs it again in a child with an
# empty environment.
. "$(dirname "$0")/lib.sh"
needs "$B/progs/membind" "$B/progs/memtruth" "$B/progs/split" "$B/progs/dlerr" "$B/libautoprof-memory.so"
plan 31
. "$ROOT/tests/memlib.sh" # MEMLIB, MEMPRELOAD, at

P=$B/progs/membind
A=$B/autoprof

# binds FILE: the distinct objects of FILE's BIND lines, and how many lines.
binds() { awk '$1 == "BIND" { n++; f[$3] = 1 } END { for (k in f) s = s k " "; print s n + 0 }' "$1"; }
# said FILE: FILE's lines but the PMU's fallback notice.
said() { grep -v '^autoprof: no hardware ' "$1"; }

timeout -s KILL 60 "$P" >plain.out 2>&1
is "$(binds plain.out)" "libc.so.6 4" "without us: malloc, free, calloc, realloc are libc's"

# ---- CPU only: nothing of ours in the allocator's path ----
timeout -s KILL 60 env AUTOPROF_OUTPUT=cpu.data LD_PRELOAD="$LIB" "$P" >cpu.out 2>cpu.err
is "$(binds cpu.out)" "libc.so.6 4" "LD_PRELOAD=libautoprof.so: malloc & co bound to libc, not to us"
timeout -s KILL 60 "$A" -q -o run.data -- "$P" child >run.out 2>run.err
is "$(binds run.out)" "libc.so.6 8" "autoprof without --memory: the same, in the program and its child" ||
	diag_file run.err
timeout -s KILL 60 "$A" -q -o cpu2.data -- sh -c 'echo "[$LD_PRELOAD]"' >pre.out 2>pre.err
is "$(cat pre.out)" "[$LIB]" "...and the children of a CPU-only run get no memory library" ||
	diag_file pre.err
timeout -s KILL 60 "$A" -q --memory -o mem2.data -- sh -c 'echo "[$LD_PRELOAD]"' >pre2.out 2>pre2.err
is "$(cat pre2.out)" "[$LIB:$MEMLIB]" "...those of a --memory run get both, libautoprof.so first" ||
	diag_file pre2.err

# ---- memory: the wrappers, in the program and its children ----
timeout -s KILL 60 "$A" -q --memory -o mem.data -- "$P" child >mem.out 2>mem.err
is "$(binds mem.out)" "libautoprof-memory.so 8" \
	"autoprof --memory: malloc & co bound to libautoprof-memory.so, in the child with an environment of its own too" ||
	diag_file mem.err
is "$(at mem.data live-bytes leak_here)" 2097152 "...and both processes' leaks are in the file" ||
	diag_file mem.err
timeout -s KILL 60 "$A" -q --memory -F 4000 -o own.data -- "$B/progs/memtruth" >/dev/null 2>own.err
perf report -i own.data --stdio --no-children --sort dso -g none 2>/dev/null |
	awk '/^# Samples: .* of event / { on = ($0 ~ "cpu-clock|cycles"); next } on && /%/' >own.dso
[ -s own.dso ] && ! grep -q libautoprof own.dso
ok $? "--memory: no CPU sample lands in the wrappers (the profiler never shows in the profile)" ||
	diag_file own.dso
timeout -s KILL 60 env AUTOPROF_MEMORY=1 AUTOPROF_OUTPUT=bare.data LD_PRELOAD="$MEMPRELOAD" "$P" \
	>bare.out 2>bare.err
is "$(binds bare.out) $(at bare.data live-bytes leak_here)" "libautoprof-memory.so 4 1048576" \
	"LD_PRELOAD=\"libautoprof.so libautoprof-memory.so\" AUTOPROF_MEMORY=1: bound to the wrappers, the leak found" ||
	diag_file bare.err
timeout -s KILL 60 env AUTOPROF_MEMORY=1 AUTOPROF_OUTPUT=rev.data LD_PRELOAD="$MEMLIB $LIB" "$P" \
	>rev.out 2>rev.err
is "$(binds rev.out) $(at rev.data live-bytes leak_here) $(said rev.err | wc -l)" \
	"libautoprof-memory.so 4 1048576 0" "the two libraries in the other order: the same, nothing said" ||
	diag_file rev.err
timeout -s KILL 60 env AUTOPROF_MEMORY=1 AUTOPROF_FOLLOW=0 AUTOPROF_OUTPUT=nf.data \
	LD_PRELOAD="$MEMPRELOAD" sh -c "$P" >nf.out 2>nf.err
is "$(binds nf.out) $(said nf.err | wc -l)" "libc.so.6 4 0" \
	"AUTOPROF_FOLLOW=0: the children load neither library" || diag_file nf.err

# ---- AUTOPROF_MEMORY=1 without libautoprof-memory.so: said, CPU profiling goes on ----
timeout -s KILL 60 env AUTOPROF_MEMORY=1 AUTOPROF_OUTPUT=miss.data LD_PRELOAD="$LIB" "$P" \
	>miss.out 2>miss.err
echo $? >miss.rc
said miss.err >miss.said
cmp -s plain.out miss.out && [ "$(cat miss.rc)" = 0 ] && [ "$(wc -l <miss.said)" = 1 ] &&
	grep -q "^autoprof: AUTOPROF_MEMORY: libautoprof-memory.so is not preloaded" miss.said &&
	grep -qF "LD_PRELOAD=\"$LIB $MEMLIB\"" miss.said
ok $? "AUTOPROF_MEMORY=1, libautoprof.so alone: runs as without us, one line names the LD_PRELOAD to use" ||
	diag_file miss.err
perf report -i miss.data --stdio >miss.rep 2>miss.perr
ok $? "...its file is a CPU profile perf report reads" || diag_file miss.perr
"$REPORT" --leaks miss.data >/dev/null 2>miss.leaks
[ $? = 1 ] && grep -q 'no memory profile' miss.leaks
ok $? "...and autoprof-report --leaks says it has no memory profile" || diag_file miss.leaks

grep -q 'both libautoprof.so and libautoprof-memory.so in LD_PRELOAD' miss.leaks
ok $? "...with the LD_PRELOAD that records one (both libraries)" || diag_file miss.leaks
"$REPORT" miss.data >miss.rep2 2>miss.rep2.err
grep -q '^Warning: .*memory profile was asked for (AUTOPROF_MEMORY) and not recorded: libautoprof-memory.so was not preloaded' miss.rep2 &&
	[ "$(grep -c 'not recorded' miss.rep2.err)" = 1 ] && perf evlist -i miss.data 2>/dev/null | grep -q '^memory-not-recorded:'
ok $? "...the file says memory was asked for and not recorded, and why: autoprof-report's summary and stderr, perf evlist" ||
	{ diag_file miss.rep2; diag_file miss.rep2.err; }
timeout -s KILL 60 env AUTOPROF_MEMORY=1 AUTOPROF_OUTPUT=mtree.data LD_PRELOAD="$LIB" \
	sh -c "$P; $P; $P child" >mtree.out 2>mtree.err
is "$(grep -c done mtree.out) $(said mtree.err | grep -c 'is not preloaded') $(said mtree.err | wc -l)" \
	"4 1 1" "...a tree of processes (fork, exec, an environment of its own): one line in all" ||
	diag_file mtree.err

# ---- the allocator out of the wrappers' reach (an allocator preloaded first): one line per run ----
JEMALLOC=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
timeout -s KILL 60 env AUTOPROF_MEMORY=1 AUTOPROF_OUTPUT=jtree.data LD_PRELOAD="$JEMALLOC $MEMPRELOAD" \
	sh -c "$P; $P child" >jtree.out 2>jtree.err
is "$(grep -c done jtree.out) $(said jtree.err | grep -c 'do not reach the library') $(said jtree.err | wc -l)" \
	"3 1 1" "malloc out of the wrappers' reach in a tree of processes: one line in all" ||
	diag_file jtree.err

"$REPORT" jtree.data >/dev/null 2>jtree.rep.err
grep -q "memory profile was asked for (AUTOPROF_MEMORY) and not recorded: the program's malloc and free did not reach" jtree.rep.err
ok $? "...and the run's file says why it has no memory profile" || diag_file jtree.rep.err

# ---- a failed lookup of ours leaves no dlerror() message for the program ----
timeout -s KILL 60 "$B/progs/dlerr" exec >dl.plain 2>&1
timeout -s KILL 60 env LD_PRELOAD="$MEMLIB" "$B/progs/dlerr" exec >dl1.out 2>/dev/null
timeout -s KILL 60 env AUTOPROF_MEMORY=1 AUTOPROF_OUTPUT=dl2.data LD_PRELOAD="$LIB" \
	"$B/progs/dlerr" exec >dl2.out 2>/dev/null
timeout -s KILL 60 env AUTOPROF_FOLLOW=0 AUTOPROF_OUTPUT=dl3.data LD_PRELOAD="$LIB" \
	"$B/progs/dlerr" >dl3.out 2>/dev/null
cat dl1.out dl2.out dl3.out >dl.all
is "$(sort dl.plain | uniq -c | tr -s ' ') / $(sort dl.all | uniq -c | tr -s ' ')" \
	" 2 dlerror: (null) /  5 dlerror: (null)" \
	"dlerror() first thing in main: (null), as without us (memory library alone, memory library missing, FOLLOW=0)" ||
	diag_file dl.all

# ---- a long LD_PRELOAD of the program's own: the library is still added to it, whole ----
LIBM=/usr/lib/x86_64-linux-gnu/libm.so.6
long=$(awk -v l="$LIBM" 'BEGIN { s = l; for (i = 1; i < 140; i++) s = s ":" l; print s }')
timeout -s KILL 60 env AUTOPROF_OUTPUT=long.data LD_PRELOAD="$LIB" L="$long" \
	sh -c 'export LD_PRELOAD="$L"; exec printenv LD_PRELOAD' >long.out 2>long.err
is "$(tr ':' '\n' <long.out | awk -v l="$LIBM" 'NR == 1 { f = $0 } $0 == l { n++ } END { print f, n, NR }')" \
	"$LIB 140 141" \
	"an exec with a long LD_PRELOAD of its own (140 entries): the child gets the library and all 140" ||
	diag_file long.err
# one the kernel takes, but not with the library added (MAX_ARG_STRLEN: 131072 with its name):
# the child runs unprofiled, and one line says so
n=$(((131072 - 12) / (${#LIBM} + 1)))
huge=$(awk -v l="$LIBM" -v n="$n" 'BEGIN { s = l; for (i = 1; i < n; i++) s = s ":" l; print s }')
timeout -s KILL 60 env AUTOPROF_OUTPUT=huge.data LD_PRELOAD="$LIB" L="$huge" \
	sh -c 'export LD_PRELOAD="$L"; exec printenv LD_PRELOAD' >huge.out 2>huge.err
[ "$(cat huge.out)" = "$huge" ] && [ "$(said huge.err | wc -l)" = 1 ] &&
	grep -q "not profiled: its LD_PRELOAD is too long" huge.err
ok $? "...one too long to add the library to: the child runs as without us, one line says it is not profiled" ||
	diag_file huge.err

# ---- libautoprof-memory.so alone: the calls pass through, one line for the whole tree ----
timeout -s KILL 60 env AUTOPROF_MEMORY=1 AUTOPROF_OUTPUT=alone.data LD_PRELOAD="$MEMLIB" "$P" \
	>alone.out 2>alone.err
echo $? >alone.rc
[ "$(cat alone.rc)" = 0 ] && [ "$(grep -vc '^BIND' alone.out)" = 1 ] && [ "$(wc -l <alone.err)" = 1 ] &&
	grep -q "^autoprof: libautoprof-memory.so is preloaded without libautoprof.so" alone.err &&
	[ ! -e alone.data ]
ok $? "libautoprof-memory.so alone: the program runs, one line says libautoprof.so is missing, no file" ||
	diag_file alone.err
is "$(binds alone.out)" "libautoprof-memory.so 4" "...its wrappers pass the calls on (bound to them)"
timeout -s KILL 60 env LD_PRELOAD="$MEMLIB" sh -c "$P; $P child" >tree.out 2>tree.err
is "$(grep -c done tree.out) $(wc -l <tree.err)" "3 1" "...a tree of processes: one line in all" ||
	diag_file tree.err
timeout -s KILL 60 env LD_PRELOAD="$MEMLIB" "$B/progs/dlerr" exec >execd.out 2>execd.err
is "$(grep -c dlerror execd.out) $(wc -l <execd.err)" "2 1" "...a process that execs another program: one line in all" ||
	diag_file execd.err
timeout -s KILL 60 env AUTOPROF_QUIET=1 LD_PRELOAD="$MEMLIB" "$P" >/dev/null 2>quiet.err
is "$(wc -l <quiet.err)" 0 "...none with AUTOPROF_QUIET=1"

# ---- the launcher without libautoprof-memory.so beside libautoprof.so ----
mkdir inst
cp "$A" "$LIB" inst/
timeout -s KILL 60 inst/autoprof -q --memory -o inst.data -- "$P" >inst.out 2>inst.err
rc=$?
[ $rc = 127 ] && [ "$(wc -l <inst.err)" = 1 ] && grep -q "libautoprof-memory.so" inst.err &&
	[ ! -s inst.out ]
ok $? "autoprof --memory without libautoprof-memory.so: one line, status 127, the command not run" ||
	diag_file inst.err
timeout -s KILL 60 inst/autoprof -q -o inst2.data -- "$P" >inst2.out 2>inst2.err
is "$(binds inst2.out)" "libc.so.6 4" "...and without --memory it is not needed" || diag_file inst2.err

# ---- memory cannot be added to a running process ----
timeout -s KILL 30 "$A" ctl $$ memory start >ctl.out 2>ctl.err
rc=$?
[ $rc = 2 ] && [ "$(wc -l <ctl.err)" = 1 ] && grep -q "start it with autoprof --memory" ctl.err
ok $? "autoprof ctl PID memory start: one line says to start the process with --memory, status 2" ||
	diag_file ctl.err

# ---- --on-window hooks run unprofiled: neither library in their LD_PRELOAD ----
printf '#!/bin/sh\necho "[$LD_PRELOAD]" >>"%s/hook.env"\n' "$T" >hook.sh
chmod +x hook.sh
timeout -s KILL 60 "$A" -q --memory --window 200ms --on-window "$T/hook.sh" -o w.data -- \
	"$B/progs/split" 500 >/dev/null 2>hook.err
[ -s hook.env ] && ! grep -q libautoprof hook.env
ok $? "--memory --on-window: the hooks' LD_PRELOAD has neither library" ||
	{ diag_file hook.err; diag_file hook.env; }
done_testing
