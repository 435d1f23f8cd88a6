#!/bin/sh
# report-aim.t - aiming autoprof-report's views (issue 14) on a recursive
# merge sort profiled by the preload, checked against perf on the same file:
# --focus (perf report -p REGEX -x), --ignore, --hide (perf script's stacks),
# -S (perf report -S), --peek, --callers (perf report --no-children -G),
# recursion folding (perf script's deepest msort chain), --hot-lines (perf
# annotate --print-line), --sort symbol/cpu (perf report --sort cpu), -n 0/all.
. "$(dirname "$0")/lib.sh"

needs "$REPORT" "$B/progs/msort" "$B/progs/threads"
[ -f "$LIB" ] || { echo "1..0 # SKIP $LIB is not built (run make)"; exit 0; }
plan 32

timeout 120 env LD_PRELOAD="$LIB" AUTOPROF_QUIET=1 AUTOPROF_OUTPUT=m.data "$B/progs/msort" 25 >/dev/null
timeout 120 env LD_PRELOAD="$LIB" AUTOPROF_QUIET=1 AUTOPROF_OUTPUT=t.data "$B/progs/threads" 400 >/dev/null
[ -s m.data ] && [ -s t.data ]
ok $? "the preload profiled the merge sort and the threads"

# perf's stacks, one line per sample, leaf first: "merge;msort;...;_start".
perf_script m.data -F ip,sym | awk 'BEGIN { RS = "" } { s = ""; n = split($0, l, "\n");
	for (i = 1; i <= n; i++) { k = split(l[i], f, " "); if (k >= 2) s = s (s ? ";" : "") f[2] }
	if (s) print s }' >perf-stacks.txt
nperf=$(wc -l <perf-stacks.txt)

# rows FILE: "name pct" of the self table of our report in FILE.
rows() { awk '/by self time/ { t = 1; next } /^$/ { t = 0 } t && $1 ~ /^[0-9.]+%$/ { sub(/%/, "", $1); print $3, $1 }' "$1"; }
# perf_rows ARGS...: "name pct" of perf report --no-children --sort sym ARGS.
perf_rows() {
	perf report -i m.data --stdio --no-children --sort sym -g none "$@" 2>/dev/null |
		awk '$1 ~ /%$/ && $2 == "[.]" { sub(/%/, "", $1); print $3, $1 }'
}
# same_rows OURS PERF: every function both name within 0.5 points, at least 2, no other rows.
same_rows() {
	awk 'NR == FNR { p[$1] = $2; np++; next } { n++ } ($1 in p) { c++; d = $2 - p[$1]; if (d > 0.5 || d < -0.5) bad++ }
		END { exit !(c >= 2 && !bad && n == np) }' "$2" "$1"
}

# ---- recursion folded ----
"$REPORT" --tree m.data >tree.txt 2>tree.err
deep=$(awk -F ';' '{ r = 0; for (i = 1; i <= NF; i++) { r = $i == "msort" ? r + 1 : 0; if (r > m) m = r } } END { print m + 0 }' perf-stacks.txt)
grep -Eq "^ +[0-9.]+%  msort \\(recursive x$deep\\)  \\([0-9]+\\)$" tree.txt
ok $? "--tree: msort's $deep nested calls (perf script's deepest chain) are one row" || diag_file tree.txt
! grep -Eq '^ +[0-9.]+%  msort  \(' tree.txt
ok $? "--tree: no unfolded msort row"
grep -Eq "^ *[0-9.]+%  msort \\(recursive x$deep\\)  \\[msort\\]" tree.txt
ok $? "--tree: msort's own heading says how deep it recursed"
"$REPORT" --callers --no-fold-recursion --min-percent 0 m.data >raw.txt
# merge's callers: perf script's deepest msort chain above merge, one row each
mdeep=$(awk -F ';' '$1 == "merge" { r = 0; for (i = 2; i <= NF; i++) { r = $i == "msort" ? r + 1 : 0; if (r > m) m = r } } END { print m + 0 }' perf-stacks.txt)
n=$(awk '/^ *[0-9.]+%  merge  \[/ { t = 1; next } t && NF == 0 { exit } t && $2 == "msort" { d = length($0) - length(substr($0, match($0, /[^ ]/))); if (d > m) m = d } END { print m / 2 }' raw.txt)
[ "$n" = "$mdeep" ] && [ "$mdeep" -ge 10 ] && ! grep -q 'recursive' raw.txt
ok $? "--no-fold-recursion keeps the raw chain: merge's callers nest $n msort rows deep (perf: $mdeep)"

# ---- callers start where the time is spent ----
"$REPORT" --callers m.data >callers.txt
awk '/^ *[0-9.]+%  [^ ]+.*  \[/ { sub(/%/, "", $1); print $2, $1 }' callers.txt | head -3 >ours-callers.txt
perf_rows -G | head -3 >perf-callers.txt
awk '{ print $1 }' ours-callers.txt >a.txt
awk '{ print $1 }' perf-callers.txt >b.txt
cmp -s a.txt b.txt && same_rows ours-callers.txt perf-callers.txt
ok $? "--callers: the first three functions and self shares are perf report --no-children -G's" ||
	{ diag_file ours-callers.txt; diag_file perf-callers.txt; }
! grep -Eq '^ *[0-9.]+%  (__libc_start|_start)[^ ]*  \[' callers.txt
ok $? "--callers does not start from __libc_start_* or _start"
awk '/^ *[0-9.]+%  merge  \[/ { t = 1; next } t && NF == 0 { exit } t && $2 == "main" { f = 1 } END { exit !f }' callers.txt
ok $? "--callers: merge's callers reach main"
# spin's direct callers (main, spin_twice) and their shares, as perf's call graph of the entry
awk '/^ *[0-9.]+%  spin  \[/ { t = 1; next } t && NF == 0 { exit } t && /^  [0-9]/ { sub(/%/, "", $1); print $2, $1 }' callers.txt | sort >ours.txt
perf report -i m.data --no-children --stdio --sort sym -S spin 2>/dev/null |
	awk 'index($0, "--") == 14 && match($0, /--[0-9.]+%--[^ ]+/) { split(substr($0, RSTART + 2), a, "%--"); print a[2], a[1] }' | sort >perf.txt
[ "$(wc -l <ours.txt)" = 2 ] && join ours.txt perf.txt | awk '{ d = $2 - $3; if (d > 0.01 || d < -0.01) bad = 1; n++ } END { exit !(n == 2 && !bad) }'
ok $? "--callers: spin's two direct callers with perf report --no-children's shares" || { diag_file ours.txt; diag_file perf.txt; }

# ---- focus, ignore, hide, -S, peek ----
"$REPORT" --no-children --focus msort m.data >focus.txt
rows focus.txt >ours.txt
perf_rows -p msort -x >perf.txt
same_rows ours.txt perf.txt
ok $? "--focus msort: the rows and shares of perf report -p msort -x" || { diag_file ours.txt; diag_file perf.txt; }
"$REPORT" --no-children --focus '^spin$' m.data >focus2.txt
rows focus2.txt >ours.txt
perf_rows -p '^spin$' -x >perf.txt
[ "$(head -n 1 ours.txt | awk '{ print $1 }')" = spin ] && [ "$(head -n 1 perf.txt | awk '{ print $1 }')" = spin ] &&
	awk 'NR == FNR { if (FNR == 1) p = $2; next } { d = $2 - p; exit !(d <= 0.5 && d >= -0.5) }' perf.txt ours.txt
ok $? "--focus '^spin\$': spin's row first, its absolute share as perf -p -x" || { diag_file ours.txt; diag_file perf.txt; }
# (spin's samples: in spin, or under it: a loaded machine's slow clock_gettime in the vdso)
nspin=$(grep -Ec '(^|;)spin(;|$)' perf-stacks.txt)
grep -q "^Samples: *[0-9]* ($((nperf - nspin)) outside --focus" focus2.txt
ok $? "--focus: the header counts the samples left out ($((nperf - nspin)))" || diag_file focus2.txt
"$REPORT" --tree --focus '^merge$' m.data | awk '/^ *[0-9.]+%  .*  \[/ { print $2; exit }' | grep -qx merge
ok $? "--focus: the tree starts from the match"

"$REPORT" --no-children --ignore '^spin$' m.data >ign.txt
rows ign.txt >ours.txt
# (perf's rows but spin's and those of functions called only under spin)
awk -F ';' '!/(^|;)spin(;|$)/ { print $1 }' perf-stacks.txt | sort -u >outside-spin.txt
perf_rows | grep -v '^spin ' | awk 'NR == FNR { k[$1]; next } ($1 in k)' outside-spin.txt - >perf.txt
same_rows ours.txt perf.txt && grep -q "($nspin outside" ign.txt
ok $? "--ignore '^spin\$': the other rows keep perf's absolute shares, $nspin samples left out" ||
	{ diag_file ours.txt; diag_file perf.txt; }

"$REPORT" --folded --hide '^msort$' m.data >hide.txt
sum=$(awk '{ s += $NF } END { print s + 0 }' hide.txt)
nmerge=$(grep -c '^\(__memmove[^;]*;\)\{0,1\}\(memcpy@plt;\|_init;\)\{0,1\}merge;' perf-stacks.txt)
# (merge the leaf, or under a PLT stub and memmove, as nmerge counts them; a
# sample of the profiler's handler has its frames above merge and is in neither)
viamain=$(awk '$1 ~ /;main;merge(;(memcpy@plt|_init))?(;__memmove[^;]*)?$/ { s += $NF } END { print s + 0 }' hide.txt)
! grep -q 'msort' hide.txt && [ "$sum" = "$nperf" ] && [ "$viamain" = "$nmerge" ]
ok $? "--hide '^msort\$': no msort frame, all $nperf samples, merge called from main in $viamain (perf: $nmerge)"

"$REPORT" --no-children -S merge,spin m.data >sym.txt
rows sym.txt >ours.txt
perf_rows -S merge,spin >perf.txt
[ "$(wc -l <ours.txt)" = 2 ] && same_rows ours.txt perf.txt
ok $? "-S merge,spin: two rows with perf report -S's shares" || { diag_file ours.txt; diag_file perf.txt; }
"$REPORT" --symbols merge --folded m.data | awk '$1 !~ /(^|;)merge(;|$)/ { bad = 1 } END { exit bad }'
ok $? "--symbols: the folded stacks all pass through merge"

"$REPORT" --tree --peek '^merge$' m.data >peek.txt
awk '/callers:/ { c = 1; next } /callees:/ { c = 0; e = 1; next } c && $2 == "msort" { a = 1 } c && $2 == "main" { bad = 1 }
	e && $2 ~ /memmove|memcpy/ { b = 1 } END { exit !(a && b && !bad) }' peek.txt &&
	[ "$(grep -c '^ *[0-9.]*%  .*  \[' peek.txt)" = 1 ]
ok $? "--peek merge: only merge, its direct callers (msort) and callees" || diag_file peek.txt

# ---- every view sees the same samples ----
"$REPORT" --folded --focus '^spin$' m.data >f.txt
[ "$(awk '{ s += $NF } END { print s + 0 }' f.txt)" = "$nspin" ] && ! grep -Evq '(^|;)spin[; ]' f.txt
ok $? "--folded --focus: only spin's $nspin stacks"
# (a frame named spin, not spin_twice: a sample in spin_twice's own code
# has no spin frame and stays)
"$REPORT" --flamegraph - --ignore '^spin$' m.data >fl.svg && ! grep -q '<title>spin ' fl.svg &&
	grep -q '<title>merge ' fl.svg
ok $? "--flamegraph --ignore: no spin frame" || { grep -o '<title>spin[^<]*' fl.svg >fl.diag; diag_file fl.diag; }
"$REPORT" --json --focus '^merge$' m.data >j.json && python3 -c 'import json,sys; json.load(open("j.json"))' &&
	! grep -q '"spin' j.json
ok $? "--json --focus: valid, without spin"
"$REPORT" --focus '(' m.data >/dev/null 2>re.err
st=$?
[ $st = 2 ] && [ "$(wc -l <re.err)" = 1 ] && grep -q "focus '('" re.err
ok $? "a bad regular expression: exit 2 and one line" || diag_file re.err

# ---- hot source lines ----
# perf annotate's summary puts a few addresses on other lines than addr2line
# (ours equal addr2line's, checked exactly below): its share within 1.5 points.
want=$(perf annotate -i m.data --stdio -l merge 2>/dev/null | awk '/^-+$/ { getline; getline; print; exit }')
"$REPORT" --hot-lines 3 m.data >hot.txt
got=$(awk '/^Hot source lines/ { h = 1 } h && $3 == "merge" { m = 1; next } m { sub(/%/, "", $1); print $1, $3; exit }' hot.txt)
wline=$(echo "$want" | awk '{ print $2 }')
gline=$(echo "$got" | awk '{ print $2 }')
[ -n "$wline" ] && [ "$wline" = "$gline" ] &&
	awk -v a="$(echo "$want" | awk '{ print $1 }')" -v b="$(echo "$got" | awk '{ print $1 }')" 'BEGIN { d = a - b; exit !(d <= 1.5 && d >= -1.5) }'
ok $? "--hot-lines: merge's hottest line and share are perf annotate --print-line's ($want / $got)" || diag_file hot.txt
# merge's samples per source line, exactly: addr2line on perf script's leaf addresses
perf_script m.data -F ip,sym | awk 'BEGIN { RS = "" } { split($0, l, "\n"); split(l[1], f, " ");
	if (f[2] == "merge") print "0x" f[1] }' >merge-ips.txt
addr2line -e "$B/progs/msort" <merge-ips.txt | sed 's|.*/||; s| .*||' | sort | uniq -c |
	awk '{ print $2, $1 }' | sort >a2l.txt
"$REPORT" --hot-lines 100 m.data | awk '/^Hot source lines/ { h = 1 } h && $3 == "merge" { m = 1; next }
	m && NF == 0 { exit } m { print $3, $2 }' | sort >ours-lines.txt
[ -s a2l.txt ] && cmp -s a2l.txt ours-lines.txt
ok $? "--hot-lines: merge's samples per line are addr2line's on perf script's addresses ($(wc -l <a2l.txt) lines)" ||
	{ diag_file a2l.txt; diag_file ours-lines.txt; }
n=$(awk '/^Hot source lines/ { h = 1 } h && $3 == "merge" { m = 1; next } m && NF == 0 { exit } m { n++ } END { print n + 0 }' hot.txt)
[ "$n" = 3 ] && "$REPORT" m.data --hot-lines=3 | cmp -s - hot.txt
ok $? "--hot-lines 3 and --hot-lines=3: three lines per function, the option anywhere"

# ---- --sort keys and -n ----
"$REPORT" --sort cpu t.data | awk '$1 ~ /%$/ && $3 ~ /^[0-9]+$/ { sub(/%/, "", $1); print $3 + 0, $1 }' | sort >ours.txt
perf report -i t.data --stdio --sort cpu -g none 2>/dev/null | awk '$1 ~ /%$/ { sub(/%/, "", $1); print $2 + 0, $1 }' | sort >perf.txt
bad=$(join ours.txt perf.txt | awk '{ d = $2 - $3; if (d > 0.5 || d < -0.5) print $1 }')
[ -s ours.txt ] && [ "$(wc -l <ours.txt)" = "$(wc -l <perf.txt)" ] && [ -z "$bad" ]
ok $? "--sort cpu: the CPUs and shares of perf report --sort cpu" || { diag_file ours.txt; diag_file perf.txt; }
"$REPORT" --sort symbol m.data >a.txt && "$REPORT" --sort sym m.data >b.txt && "$REPORT" --sort function m.data >c.txt &&
	cmp -s a.txt c.txt && cmp -s b.txt c.txt
ok $? "--sort symbol and sym are --sort function"
"$REPORT" --sort symbol,bogus m.data >/dev/null 2>bad.err
st=$?
[ $st = 2 ] && [ "$(wc -l <bad.err)" = 1 ] && grep -q "'symbol,bogus'" bad.err &&
	grep -q 'function (symbol, sym)' bad.err && grep -q 'cpu' bad.err
ok $? "a refused --sort key: exit 2, one line listing the valid keys" || diag_file bad.err
"$REPORT" -n 0 --no-children m.data >n0.txt && "$REPORT" -n all --no-children m.data >nall.txt && cmp -s n0.txt nall.txt
ok $? "-n 0 is -n all"
[ "$(rows n0.txt | wc -l)" = "$(perf_rows | wc -l)" ]
ok $? "-n all: every function perf report lists ($(perf_rows | wc -l))"
"$REPORT" -n all --tree m.data >/dev/null && "$REPORT" -n 0 --json m.data >/dev/null &&
	"$REPORT" -n all --callers m.data >/dev/null
ok $? "-n 0/all are taken by the tree, callers and JSON views"
clean_stderr tree.err
ok $? "no warnings"
done_testing
