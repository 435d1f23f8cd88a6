#!/bin/sh
# report-flame.t - flame graphs as a user sees them: the SVGs (flame, icicle,
# differential) rendered in headless Chromium, with assertions on what is
# drawn (labels, zoom and search through the page's own script, the root and
# the controls on screen), the --flamegraph options (--title, --width,
# --colors, --icicle, --min-width, --process-root), kernel and JIT colours, a
# node per command when a process tree's files merge, and --diff of sets of
# files, checked against perf report / perf script on the same files.
. "$(dirname "$0")/lib.sh"

needs "$REPORT" "$LIB" "$B/autoprof" "$B/progs/split" "$B/progs/threads" "$B/progs/demo" \
	"$B/progs/jitmap" "$B/progs/syscalls"
if ! command -v chromium >/dev/null 2>&1; then
	if [ -n "${CI:-}" ]; then
		plan 1
		ok 1 "chromium is installed (scripts/install-deps.sh test)"
		done_testing
	fi
	echo "1..0 # SKIP chromium is not installed (scripts/install-deps.sh test installs it)"
	exit 0
fi
plan 46

prof() { # prof OUT PROG ARGS...: profile PROG with the preload into OUT
	_o=$1
	shift
	LD_PRELOAD=$LIB AUTOPROF_QUIET=1 AUTOPROF_OUTPUT=$_o "$@" >/dev/null 2>&1
}
prof s.data "$B/progs/split" 400
prof demo.data "$B/progs/demo" 0.3
prof jit.data "$B/progs/jitmap" 200
AUTOPROF_KERNEL=1 prof k.data "$B/progs/syscalls"
"$B/autoprof" --per-process -o tree.data sh -c "'$B/progs/split' 300 >/dev/null; '$B/progs/threads' 300 >/dev/null" \
	>/dev/null 2>&1
set -- tree.data*
tree_files="$*" # the process tree's files (nsamples leaves FILE.err beside them)
[ -s s.data ] && [ -s demo.data ] && [ -s jit.data ] && [ $# -ge 2 ]
ok $? "the preload and the launcher wrote the profiles ($# files for the process tree)"

# js FILE: the checks for browser_dump, from standard input.
js() { cat >"$1"; }
# val KEY: the value a browser_dump reported for KEY (in out.txt).
val() { sed -n "s/^$1=//p" out.txt | head -n 1; }
# near A B TOL: |A - B| <= TOL
near() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; exit !(a != "" && b != "" && d <= t && -d <= t) }'; }

# ---- a plain flame graph: labels, zoom, search, Escape ----
"$REPORT" --flamegraph s.svg s.data 2>err.txt && python3 -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' s.svg &&
	clean_stderr err.txt
ok $? "--flamegraph writes a well-formed SVG"
grep -q '<text [^>]*>heavy_two_thirds</text>' s.svg
ok $? "labels are in the file itself (readable as an <img>, without the script)"
js plain.js <<'JS'
function run_checks() {
  report('labels', '|' + visible_labels() + '|');
  report('title', document.getElementById('title').textContent);
  var light = frame('light_one_third'), w0 = rect_of(light).getAttribute('width');
  click(rect_of(light));
  report('zoom_width', rect_of(light).getAttribute('width'));
  report('zoom_label', light.getElementsByTagName('text')[0].textContent);
  report('zoom_sibling', frame('heavy_two_thirds').getAttribute('class'));
  report('zoom_reset_shown', on_screen(document.getElementById('unzoom')));
  window.dispatchEvent(new KeyboardEvent('keydown', {key: 'Escape', bubbles: true}));
  report('unzoom_back', rect_of(light).getAttribute('width') === w0);
  window.prompt = function () { return 'heavy'; };
  click(document.getElementById('search'));
  report('matched', document.getElementById('matched').textContent);
  var gs = document.getElementById('frames').getElementsByTagName('g'), hl = [];
  for (var i = 0; i < gs.length; i++)
    if (rect_of(gs[i]).getAttribute('fill') === 'rgb(230,0,230)') hl.push(gs[i].getAttribute('data-name'));
  report('highlighted', hl.join(','));
  report('root_on_screen', on_screen(rect_of(frame('all'))));
  report('search_on_screen', on_screen(document.getElementById('search')));
}
JS
browser_dump s.svg plain.js >out.txt
# has_labels NAME...: every NAME is one of the drawn labels in out.txt.
has_labels() {
	for _l in "$@"; do
		case "$(val labels)" in *"|$_l|"*) ;; *) return 1 ;; esac
	done
}
has_labels main work_loop heavy_two_thirds light_one_third
ok $? "Chromium draws the labels main, work_loop, heavy_two_thirds, light_one_third" || diag_file out.txt
is "$(val zoom_width)" "1180.00" "a click on light_one_third zooms it to the full width (page script)"
[ "$(val zoom_label)" = light_one_third ] && [ "$(val zoom_sibling)" = hide ] && [ "$(val zoom_reset_shown)" = true ]
ok $? "zoomed: its label in full, its sibling hidden, Reset Zoom shown" || diag_file out.txt
is "$(val unzoom_back)" true "Escape restores the frame's width"
want=$(perf_share s.data heavy_two_thirds)
got=$(val matched | sed -n 's/^Matched: \([0-9.]*\)%$/\1/p')
near "$got" "$want" 0.5
ok $? "the Search button (page script) shows the matched share: $got% vs perf report's $want%" || diag_file out.txt
is "$(val highlighted)" heavy_two_thirds "search highlights the matching frame"
[ "$(val root_on_screen)" = true ] && [ "$(val search_on_screen)" = true ]
ok $? "root and Search on screen at load"

# ---- a tall graph (deep recursion) in a short window: opened at the root ----
"$REPORT" --flamegraph demo.svg demo.data
h=$(sed -n 's/.*<svg [^>]* height="\([0-9]*\)".*/\1/p' demo.svg)
js tall.js <<'JS'
function run_checks() {
  report('inner', window.innerHeight);
  report('root', on_screen(rect_of(frame('all'))));
  report('search', on_screen(document.getElementById('search')));
  report('title', on_screen(document.getElementById('title')));
  var gs = document.getElementById('frames').getElementsByTagName('g'), deep = gs[0];
  for (var i = 0; i < gs.length; i++)
    if (+gs[i].getAttribute('data-d') > +deep.getAttribute('data-d')) deep = gs[i];
  click(rect_of(deep));
  report('deep_zoom', rect_of(deep).getAttribute('width'));
  scroll_to(0);
  hover(rect_of(deep));
  report('search_after_scroll', on_screen(document.getElementById('search')));
  report('details_after_scroll', on_screen(document.getElementById('details')) &&
      document.getElementById('details').textContent.indexOf(deep.getAttribute('data-name')) === 0);
}
JS
browser_dump demo.svg tall.js 1280 500 >out.txt
inner=$(val inner)
[ -n "$inner" ] && [ "$h" -gt "$inner" ]
ok $? "the demo's graph ($h px) is taller than the window ($inner px)"
[ "$(val root)" = true ] && [ "$(val search)" = true ] && [ "$(val title)" = true ]
ok $? "a tall graph opens with its root, the title and Search on screen" || diag_file out.txt
[ "$(val deep_zoom)" = 1180.00 ] && [ "$(val search_after_scroll)" = true ] && [ "$(val details_after_scroll)" = true ]
ok $? "zoom still works on it, and the controls follow when scrolled to the top" || diag_file out.txt

# ---- --title, --width, --icicle ----
"$REPORT" --flamegraph ic.svg --icicle --title 'My <run>' --width 800 s.data
js icicle.js <<'JS'
function run_checks() {
  var all = rect_of(frame('all')).getBoundingClientRect(), main = rect_of(frame('main')).getBoundingClientRect();
  var heavy = rect_of(frame('heavy_two_thirds')).getBoundingClientRect();
  report('order', all.top < main.top && main.top < heavy.top);
  report('root', on_screen(rect_of(frame('all'))));
  report('title', document.getElementById('title').textContent);
  report('width', document.getElementById('frames').ownerSVGElement.getAttribute('width') + ',' +
      rect_of(frame('all')).getAttribute('width'));
  click(rect_of(frame('heavy_two_thirds')));
  report('zoom', rect_of(frame('heavy_two_thirds')).getAttribute('width'));
}
JS
browser_dump ic.svg icicle.js 1280 300 >out.txt
[ "$(val order)" = true ] && [ "$(val root)" = true ]
ok $? "--icicle: the root at the top, callees below it, on screen" || diag_file out.txt
is "$(val title)" "My <run>" "--title sets the title"
is "$(val width)" "800,780.00" "--width 800: an 800-pixel image, the root 780 wide"
is "$(val zoom)" "780.00" "zoom works in the icicle graph"
"$REPORT" --flamegraph ic2.svg --icicle s.data && grep -q '>Icicle Graph<' ic2.svg
ok $? "an icicle graph is titled Icicle Graph by default"

# ---- --colors, --min-width, bad values ----
"$REPORT" --flamegraph mem.svg --colors mem s.data
bad=$(grep -o '<title>[^<]*\[split\][^<]*</title><rect [^>]* fill="[^"]*"' mem.svg | grep -vc 'fill="rgb(0,')
n=$(grep -c '\[split\]' mem.svg)
[ "$n" -ge 3 ] && [ "$bad" -eq 0 ]
ok $? "--colors mem: the program's $n frames in the mem palette (blue-green)"
"$REPORT" --flamegraph x.svg --colors nosuch s.data 2>err.txt
r=$?
[ $r -eq 2 ] && [ ! -e x.svg ] && [ "$(wc -l <err.txt)" -eq 1 ] && grep -q 'hot, mem, io' err.txt
ok $? "--colors nosuch: exit 2, one line listing the palettes, no file" || diag_file err.txt
"$REPORT" --flamegraph mw.svg --min-width 20% s.data
small=$(grep -o ' data-n="[0-9]*"' mw.svg | tr -dc '0-9\n' | awk 'NR == 1 { t = $1 } $1 < t * 0.2 { c++ } END { print c + 0 }')
grep -q 'data-name="light_one_third"' mw.svg && [ "$small" -eq 0 ]
ok $? "--min-width 20%: no frame under 20% of the samples, light_one_third (31%) kept"
for a in "--width 5" "--width x" "--min-width -1" "--min-width 101%" "--process-root tree"; do
	# shellcheck disable=SC2086
	"$REPORT" --flamegraph y.svg $a s.data 2>err.txt
	[ $? -eq 2 ] && [ ! -e y.svg ] && [ "$(wc -l <err.txt)" -eq 1 ] || break
	a=
done
is "$a" "" "bad --width, --min-width and --process-root values: exit 2 and one line"

# ---- kernel and JIT frames ----
"$REPORT" --flamegraph jit.svg jit.data
fill=$(grep -o '<title>jit_hot_loop [^<]*</title><rect [^>]*fill="rgb([0-9,]*)"' jit.svg | sed 's/.*fill="rgb(\([0-9,]*\))"/\1/')
echo "$fill" | awk -F, '{ exit !($2 >= 200 && $1 <= 110 && $3 <= 110) }'
ok $? "JIT frames (perf-PID.map) are green ($fill)"
if command -v node >/dev/null 2>&1; then
	# node --perf-prof writes a jitdump; perf inject --jit makes a jitted-*.so per function.
	echo 'function fibJs(n) { return n < 2 ? n : fibJs(n - 1) + fibJs(n - 2); }
let s = 0; for (let i = 0; i < 30; i++) s += fibJs(27); console.log(s);' >fib.js
	prof node.data node --perf-prof fib.js
	perf inject --jit -i node.data -o node.inj 2>/dev/null
	"$REPORT" --flamegraph node.svg node.inj 2>/dev/null
	jf=$(grep -o '<title>[^<]*\[jitted-[0-9]*-[0-9]*\.so\][^<]*</title><rect [^>]*fill="rgb([0-9,]*)"' node.svg | sed 's/.*fill="rgb(\([0-9,]*\))"/\1/')
	[ -n "$jf" ] && echo "$jf" | awk -F, '{ if (!($2 >= 200 && $1 <= 110 && $3 <= 110)) bad++ } END { exit bad + 0 }'
	ok $? "JIT frames in perf inject --jit's jitted-*.so objects are green ($(echo "$jf" | grep -c .) frames)"
else
	skip "no node"
fi
"$REPORT" --flamegraph k.svg k.data
kf=$(grep -o '<title>[^<]*\[kernel.kallsyms\][^<]*</title><rect [^>]*fill="rgb([0-9,]*)"' k.svg | sed 's/.*fill="rgb(\([0-9,]*\))"/\1/')
if [ -n "$kf" ]; then
	uf=$(grep -o '<title>[^<]*\[\(syscalls\|libc.so.6\)\][^<]*</title><rect [^>]*fill="rgb([0-9,]*)"' k.svg | sed 's/.*fill="rgb(\([0-9,]*\))"/\1/')
	echo "$kf" | awk -F, '{ if (!($1 >= 190 && $2 >= 90 && $2 <= 155 && $3 == 0)) bad++ } END { exit bad + 0 }' &&
		[ -n "$uf" ] && echo "$uf" | awk -F, '{ if (!($1 >= 200 && $3 >= 50 && $2 == $3)) bad++ } END { exit bad + 0 }'
	ok $? "kernel frames are orange ($(echo "$kf" | wc -l) frames), the program's frames red beside them"
else
	skip "no kernel samples here (perf_event_paranoid)"
fi

# ---- a process tree: one node per command under all ----
"$REPORT" --flamegraph tree.svg "$@"
grep -o '<g data-s="[0-9]*" data-n="[0-9]*" data-d="1" data-name="[^"]*"' tree.svg |
	sed 's/.*data-n="\([0-9]*\)".*data-name="\([^"]*\)"/\2 \1/' | sort >procs.txt
: >perf-procs.txt
for f in "$@"; do
	c=$(perf report --header-only -i "$f" 2>/dev/null | sed -n 's|^# cmdline : \(autoprof \)\{0,1\}\([^ ]*\).*|\2|p')
	n=$(nsamples "$f")
	[ "$n" -gt 0 ] && echo "$(basename "$c") $n" >>perf-procs.txt
done
sort perf-procs.txt | awk '{ n[$1] += $2 } END { for (c in n) print c, n[c] }' | sort >perf-procs2.txt
is "$(cat procs.txt)" "$(cat perf-procs2.txt)" "merged files: one node per command under all, samples as perf script counts them"
"$REPORT" --flamegraph tree2.svg --process-root pid "$@"
pid=$(grep -o 'data-d="1" data-name="threads \[[0-9]*\]"' tree2.svg | grep -o '[0-9]*' | tail -n 1)
[ -n "$pid" ] && perf script -i "$(grep -l busy-0 "$@" 2>/dev/null | head -n 1)" -F pid 2>/dev/null | grep -qw "$pid"
ok $? "--process-root pid: 'threads [$pid]', the pid perf script shows"
"$REPORT" --flamegraph one.svg s.data && ! grep -q 'data-d="1" data-name="split"' one.svg &&
	"$REPORT" --flamegraph one2.svg --process-root comm s.data && grep -q 'data-d="1" data-name="split"' one2.svg &&
	"$REPORT" --flamegraph tree3.svg --process-root none "$@" && grep -q 'data-d="1" data-name="_start"' tree3.svg
ok $? "one process: no process node unless --process-root comm; --process-root none merges the tree"
js tree.js <<'JS'
function run_checks() {
  report('labels', '|' + visible_labels() + '|');
  click(rect_of(frame('threads')));
  report('zoom', rect_of(frame('threads')).getAttribute('width') + ' ' + frame('split').getAttribute('class'));
}
JS
browser_dump tree.svg tree.js >out.txt
has_labels split threads
ok $? "Chromium draws the process nodes split and threads" || diag_file out.txt
is "$(val zoom)" "1180.00 hide" "a click on a process node zooms to that process"

# ---- --diff: two files, sets of files, the syntax ----
"$REPORT" --diff s.data s.data | grep -q '^No change'
ok $? "--diff A B still compares two files"
# (--no-inline below: the deltas are checked against perf report's shares, which
# name the symbol's function; split.c inlines spin())
"$REPORT" --no-inline --diff s.data -- "$@" >d1.txt 2>err.txt && clean_stderr err.txt
ok $? "--diff BASELINE -- NEW... reads a set of files on the new side"
grep -q "^New:      tree.data, " d1.txt && grep -q '^Baseline: s.data (' d1.txt
ok $? "the header names both sides' files" || diag_file d1.txt
"$REPORT" --no-inline --baseline s.data "$@" >d2.txt && cmp -s d1.txt d2.txt
ok $? "--baseline FILE NEW... prints the same comparison"
"$REPORT" --no-inline "$@" >new.txt
for fn in burn_alpha heavy_two_thirds; do
	b=$(awk -v f=$fn '/by self time/ { t = 1; next } t && $3 == f { sub(/%/, "", $1); print $1; exit }' new.txt)
	a=$(perf_share s.data $fn)
	d=$(awk -v f=$fn '$4 == f { print $3 }' d1.txt)
	near "$d" "$(awk -v a="${a:-0}" -v b="${b:-0}" 'BEGIN { printf "%.2f", b - a }')" 0.011 || break
	fn=
done
is "$fn" "" "the deltas are the new set's share minus the baseline's (perf report's) share"
"$REPORT" --diff s.data tree.data "$B/nothing" 2>err.txt >/dev/null
r1=$?
"$REPORT" --diff -- s.data 2>>err.txt >/dev/null
r2=$?
"$REPORT" --diff s.data -- 2>>err.txt >/dev/null
r3=$?
"$REPORT" --baseline s.data 2>>err.txt >/dev/null
r4=$?
[ "$r1$r2$r3$r4" = 2222 ] && [ "$(wc -l <err.txt)" -eq 4 ]
ok $? "--diff with three files, an empty side, or --baseline alone: exit 2, one line each" || diag_file err.txt
"$REPORT" --diff --title -- --flamegraph t.svg s.data s.data && grep -q '>--</text>' t.svg
ok $? "an option's argument '--' is not the sides' separator (--title --)"

# ---- the differential flame graph ----
"$REPORT" --diff --flamegraph diff.svg s.data -- "$@" 2>err.txt && clean_stderr err.txt &&
	python3 -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' diff.svg
ok $? "--diff ... --flamegraph writes a well-formed SVG"
js diff.js <<'JS'
function run_checks() {
  report('labels', '|' + visible_labels() + '|');
  report('title', document.getElementById('title').textContent);
  report('total', document.getElementById('frames').ownerSVGElement.getAttribute('data-total'));
  report('grew', fill_of(frame('burn_alpha')));
  report('shrank', fill_of(frame('heavy_two_thirds')));
  report('tip', frame('burn_alpha').getElementsByTagName('title')[0].textContent);
  report('tip2', frame('heavy_two_thirds').getElementsByTagName('title')[0].textContent);
  click(rect_of(frame('burn_alpha')));
  report('zoom', rect_of(frame('burn_alpha')).getAttribute('width'));
  report('root', on_screen(rect_of(frame('all'))));
}
JS
browser_dump diff.svg diff.js >out.txt
has_labels burn_alpha heavy_two_thirds && [ "$(val title)" = "Differential Flame Graph" ] && [ "$(val root)" = true ]
ok $? "Chromium draws the differential graph: title, labels, root" || diag_file out.txt
want=$(awk '$1 == "New:" { print }' d1.txt | sed 's/.*, \([0-9]*\) samples.*/\1/')
[ -n "$want" ] && [ "$(val total)" = "$want" ]
ok $? "it has the new profile's shape: its $want samples"
echo "$(val grew) $(val shrank)" | awk '{ split($1, g, ","); split($2, s, ","); exit !(g[1] == 255 && g[2] < 240 && g[2] == g[3] && s[3] == 255 && s[1] < 240 && s[1] == s[2]) }'
ok $? "red where it grew (burn_alpha $(val grew)), blue where it shrank (heavy_two_thirds $(val shrank))"
# tip KEY: "new-share baseline-share change" from a tooltip
# "NAME [obj] (N samples, P%; baseline M samples, Q%; grew|shrank D points)".
tip() { val "$1" | sed -n 's/.* samples, \([0-9.]*\)%; baseline [0-9]* samples, \([0-9.]*\)%; [a-z]* \([-+][0-9.]*\) points)$/\1 \2 \3/p'; }
set -- $(tip tip) $(tip tip2)
base=$(perf report -i s.data --stdio --children --sort sym -g none 2>/dev/null |
	awk '$4 == "heavy_two_thirds" { sub(/%/, "", $1); print $1; exit }')
[ $# -eq 6 ] && near "$3" "$(awk -v p="$1" -v q="$2" 'BEGIN { print p - q }')" 0.016 && [ "$2" = 0.00 ] &&
	near "$6" "$(awk -v p="$4" -v q="$5" 'BEGIN { print p - q }')" 0.016 && near "$5" "$base" 0.5 &&
	awk -v a="$3" -v b="$6" 'BEGIN { exit !(a > 0 && b < 0) }'
ok $? "tooltips: new and baseline shares (heavy_two_thirds $5% as perf report --children has it: $base%) and their difference ($*)" ||
	diag_file out.txt
# shellcheck disable=SC2086
set -- $tree_files
is "$(val zoom)" "1180.00" "zoom works in the differential graph"
"$REPORT" --diff --flamegraph diff2.svg s.data -- "$@" && cmp -s diff.svg diff2.svg
ok $? "the differential graph is the same bytes every time"
"$REPORT" --diff -e nosuch --flamegraph diff3.svg s.data -- "$@" 2>err.txt
[ $? -eq 1 ] && [ "$(wc -l <err.txt)" -eq 1 ] && [ ! -s diff3.svg ]
ok $? "--diff -e with an event the new profile lacks: one line, exit 1, no graph" || diag_file err.txt
"$REPORT" --diff --raw-counts --flamegraph raw.svg s.data -- "$@" &&
	grep -q '<title>burn_alpha [^<]*grew +[0-9]* samples)' raw.svg
ok $? "--raw-counts: the change in samples"
done_testing
