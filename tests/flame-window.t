#!/bin/sh
# flame-window.t - a flame graph SVG opened by itself in a browser (headless
# Chromium, screenshots read pixel by pixel): a deep recursion (2000+ px tall)
# at 1400x900 shows its root at the bottom (or the top with --icicle), not a
# blank page; the keys move it; a profile with 0 samples gets a graph that
# says so and one line on stderr (issue 24).
. "$(dirname "$0")/lib.sh"
needs "$REPORT" "$B/autoprof" "$B/progs/deeprec"
if ! command -v chromium >/dev/null 2>&1; then
	echo "1..0 # SKIP chromium is not installed (scripts/install-deps.sh test)"
	exit 0
fi
plan 16

# shot SVG WIDTH HEIGHT PNG: a screenshot of SVG opened by itself.
shot() {
	timeout -s KILL 60 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--no-first-run --user-data-dir="$T/chromium" --window-size="$2,$3" \
		--virtual-time-budget=3000 --screenshot="$T/$4" "file://$T/$1" >/dev/null 2>&1
}
# run PNG COLOUR: "WIDTH ROW ROWS" of the colour's longest run (png_run.py).
run() { python3 "$ROOT/tests/browser/png_run.py" "$1" "$2"; }
ROOT_RGB=220,220,220 # the root frame, "all" (flame_palette.c)

"$B/autoprof" -q -o deep.data -- "$B/progs/deeprec" 0.3 >/dev/null
"$REPORT" --flamegraph deep.svg deep.data 2>err.txt
h=$(sed -n 's/.*<svg [^>]* height="\([0-9]*\)".*/\1/p' deep.svg)
[ -n "$h" ] && [ "$h" -gt 2000 ] && clean_stderr err.txt
ok $? "a deep recursion's flame graph is taller than 2000 px ($h)"
frame_rgb=$(grep -m1 -o 'data-name="descend">.*' deep.svg | sed -n 's/.* fill="rgb(\([0-9,]*\))".*/\1/p' | head -1)

shot deep.svg 1400 900 deep.png
set -- $(run deep.png $ROOT_RGB)
[ "${1:-0}" -ge 1100 ] && [ "${2:--1}" -ge 800 ]
ok $? "at 1400x900 the root is drawn across the graph near the bottom (run $1 px on row $2)"
set -- $(run deep.png "$frame_rgb")
[ "${3:-0}" -ge 300 ]
ok $? "and the recursion's frames above it fill the window ($3 rows of descend)"

shot deep.svg 1400 2300 tall.png
set -- $(run tall.png $ROOT_RGB)
[ "${1:-0}" -ge 1100 ] && [ "${2:--1}" -ge $((h - 60)) ]
ok $? "in a window taller than the graph, the whole graph with the root at its foot (row $2)"

shot deep.svg 600 400 small.png
set -- $(run small.png $ROOT_RGB)
[ "${1:-0}" -ge 500 ] && [ "${2:--1}" -ge 300 ]
ok $? "at 600x400 too (run $1 px on row $2)"

"$REPORT" --flamegraph ice.svg --icicle deep.data
shot ice.svg 1400 900 ice.png
set -- $(run ice.png $ROOT_RGB)
[ "${1:-0}" -ge 1100 ] && [ "${2:--1}" -le 120 ]
ok $? "--icicle at 1400x900: the root at the top (row $2)"

# The keys move a graph that scrolls inside itself: Home shows the top of
# the tower, End the root again (a script added to a copy reports the view).
keys() {
	sed "s|</svg>|<script><![CDATA[setTimeout(function () {\
window.dispatchEvent(new KeyboardEvent('keydown', {key: '$1'}));\
document.documentElement.setAttribute('data-view', document.documentElement.getAttribute('viewBox'));\
}, 100);]]></script></svg>|" deep.svg >"keys-$1.svg"
	timeout -s KILL 60 chromium --headless --no-sandbox --disable-gpu --no-first-run \
		--user-data-dir="$T/chromium" --window-size=1400,900 --virtual-time-budget=3000 \
		--dump-dom "file://$T/keys-$1.svg" 2>/dev/null | sed -n 's/.* data-view="\([^"]*\)".*/\1/p'
}
set -- $(keys Home)
is "${2:-}" 0 "Home: the view's top at the graph's top"
set -- $(keys PageUp)
[ -n "${2:-}" ] && [ "$2" -gt 0 ] && [ "$(($2 + $4))" -lt "$h" ]
ok $? "PageUp: a page up from the root (view from $2, $4 px of $h)"
set -- $(keys End)
[ -n "${4:-}" ] && is "$(($2 + $4))" "$h" "End: the view's foot at the graph's foot (the root)"

# A profile with no samples: a graph that says so, and one line. (Paused from the start:
# `true` alone took a sample in its exit path once, in CI's loaded VM.)
AUTOPROF_COUNTERS=none "$B/autoprof" -q --start-paused -o empty.data -- true
"$REPORT" --flamegraph empty.svg empty.data >out.txt 2>err.txt
is "$?" 0 "a profile with 0 samples: exit 0, as the report of it"
[ "$(grep -c '' err.txt)" = 1 ] && grep -q "empty.svg: the flame graph is empty: the profile has no samples" err.txt
ok $? "one line says the flame graph is empty" || diag_file err.txt
grep -q ">No samples of [^<]* in the profile: nothing to draw<" empty.svg && [ ! -s out.txt ]
ok $? "the SVG itself says so"
"$REPORT" --diff --flamegraph ed.svg empty.data empty.data 2>err.txt
st=$?
[ "$st" = 0 ] && grep -q "ed.svg: the flame graph is empty" err.txt
ok $? "a differential graph of empty profiles too" || diag_file err.txt
"$REPORT" --flamegraph - empty.data >out.svg 2>err.txt
grep -q "nothing to draw" out.svg &&
	grep -q "standard output: the flame graph is empty" err.txt
ok $? "and one on standard output" || diag_file err.txt
# The other exports of an empty profile say it the same way.
"$REPORT" --folded empty.data >out.txt 2>err.txt
st=$?
[ "$st" = 0 ] && [ ! -s out.txt ] && grep -q "^autoprof-report: standard output: no folded stacks: the profile has no samples$" err.txt
ok $? "--folded of it: exit 0, nothing on stdout, one line" || diag_file err.txt
"$REPORT" --pprof e.pb --speedscope e.json empty.data 2>err.txt
st=$?
[ "$st" = 0 ] && grep -q "e.pb: an empty pprof profile" err.txt && grep -q "e.json: an empty speedscope profile" err.txt &&
	[ "$(grep -c '' err.txt)" = 2 ]
ok $? "--pprof and --speedscope of it: one line each" || diag_file err.txt
done_testing
