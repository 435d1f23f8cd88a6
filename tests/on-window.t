#!/bin/sh
# on-window.t - --on-window CMD (issue 24): CMD FILE runs for each finished
# window file, unprofiled; a failing hook is said and never stops profiling.
. "$(dirname "$0")/lib.sh"
needs "$B/autoprof" "$B/progs/split" "$B/progs/life"
plan 14
A=$B/autoprof

mkdir copies
cat >hook.sh <<'SH'
#!/bin/sh
echo "$1 ${LD_PRELOAD:-none} ${AUTOPROF_ON_WINDOW:-none}" >>hooks.txt
cp "$1" copies/ || exit 3
SH
chmod +x hook.sh

"$A" --window 300ms --on-window "$T/hook.sh" -o w.data -- "$B/progs/split" 1200 >out.txt 2>err.txt
is "$?:$(cat out.txt)" "0:split: done" "the command runs as without the hook"
windows=$(ls w.data.*T* | grep -v '\.stat$' | wc -l)
hooked=$(sort -u hooks.txt | wc -l)
[ "$windows" -ge 3 ] && [ "$hooked" = "$windows" ] && [ "$(wc -l <hooks.txt)" = "$windows" ]
ok $? "the hook ran once for each window file ($hooked of $windows)" || diag_file hooks.txt
missing=
for f in w.data.*T*; do
	case $f in *.stat) continue ;; esac
	grep -q "^$T/$f " hooks.txt || missing="$missing $f"
done
is "$missing" "" "with the file's full path as its argument"
bad=
for f in copies/*; do
	perf script -i "$f" >/dev/null 2>e.txt && clean_stderr e.txt || bad="$bad $f"
	cmp -s "$f" "$(basename "$f")" || bad="$bad $f(changed-after)"
done
is "$bad" "" "each file was finished when its hook ran: the hook's copy reads cleanly and is the final file"
is "$(cut -d' ' -f2,3 hooks.txt | sort -u)" "none none" "the hook runs without the library in LD_PRELOAD, nor AUTOPROF_ON_WINDOW"
grep -q "^autoprof: --on-window: ran '$T/hook.sh' for $windows window files$" err.txt
ok $? "the closing line counts the hooks run" || diag_file err.txt

"$A" --window 300ms --on-window 'exit 4;' -o f.data -- "$B/progs/split" 900 >out.txt 2>err.txt
is "$?:$(cat out.txt)" "0:split: done" "a failing hook does not change the command's run or exit status"
n=$(ls f.data.*T* | grep -vc '\.stat$')
[ "$(grep -c "^autoprof: --on-window: 'exit 4; $T/f.data\.[0-9T.]*' failed (exit status 4)$" err.txt)" = "$n" ] && [ "$n" -ge 2 ]
ok $? "each failure is one line naming the file and the status ($n windows)" || diag_file err.txt

"$A" --on-window true -o x.data -- true >out.txt 2>err.txt
is "$?" 2 "--on-window without --window is refused (exit 2)"
[ "$(grep -c '' err.txt)" = 1 ] && grep -q -- "--on-window goes with --window" err.txt && [ ! -e x.data ]
ok $? "in one line, nothing run" || diag_file err.txt

# A process tree: the child's windows get the hook too.
"$A" -q --window 200ms --on-window "$T/hook.sh" -o t.data -- "$B/progs/life" fork "$B/progs" >/dev/null 2>&1
files=$(ls t.data*T* 2>/dev/null | grep -vc '\.stat$')
is "$(grep -c "/t.data" hooks.txt)" "$files" "a forked child's window files get the hook too ($files files)"

# Files per process (-o NAME.%p.data): the library writes each window's file itself, made
# unnamed and linked when whole; the hook waits for its close under its name.
: >hooks.txt
"$A" -q --window 300ms --on-window "$T/hook.sh" -o q.%p.data -- "$B/progs/split" 900 >/dev/null 2>&1
files=$(ls q.*.data.*T* | grep -vc '\.stat$')
[ "$files" -ge 2 ] && [ "$(grep -c "/q\.[0-9]*\.data" hooks.txt)" = "$files" ]
ok $? "files per process: the hook ran for each of its $files window files" || diag_file hooks.txt

# Outside mode (--outside, static and Go programs, -p): the same hook.
: >hooks.txt
"$A" -q --outside --window 300ms --on-window "$T/hook.sh" -o o.data -- "$B/progs/split" 900 >/dev/null 2>&1
files=$(ls o.data.*T* | grep -vc '\.stat$')
[ "$files" -ge 2 ] && [ "$(grep -c "/o.data" hooks.txt)" = "$files" ]
ok $? "--outside: the hook ran for each of its $files window files" || diag_file hooks.txt
"$B/progs/split" 5000 >/dev/null &
pid=$!
"$A" -q -p $pid --duration 1 --window 300ms --on-window "$T/hook.sh" -o p.data 2>/dev/null
kill $pid
files=$(ls p.data.*T* | grep -vc '\.stat$')
[ "$files" -ge 2 ] && [ "$(grep -c "/p.data" hooks.txt)" = "$files" ]
ok $? "-p PID: the hook ran for each of its $files window files" || diag_file hooks.txt
done_testing
