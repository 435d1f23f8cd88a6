#!/bin/sh
# report-compare.sh - run two autoprof-report binaries on the same files in
# every view and export, and say where their outputs differ (byte for byte).
# For refactorings that must not change what the reader prints.
#
# usage: scripts/report-compare.sh OLD_REPORT NEW_REPORT FILE...
# Exit status 0 when every output is identical, 1 otherwise.

[ $# -ge 3 ] || { echo "usage: $0 OLD_REPORT NEW_REPORT FILE..." >&2; exit 2; }
old=$1
new=$2
shift 2
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM
status=0
for f in "$@"; do
	# one view per line: the options (the output goes to stdout)
	while IFS= read -r view; do
		for which in old new; do
			eval bin=\$$which
			# shellcheck disable=SC2086
			timeout -s KILL 60 "$bin" $view "$f" >"$tmp/$which.out" 2>"$tmp/$which.err"
			echo "exit $?" >>"$tmp/$which.err"
			if [ -e "$tmp/x.pprof" ]; then
				gzip -dc "$tmp/x.pprof" >>"$tmp/$which.out" 2>/dev/null
				rm -f "$tmp/x.pprof"
			fi
			if [ -d "$tmp/csv" ]; then
				cat "$tmp/csv"/* >>"$tmp/$which.out" 2>/dev/null
				rm -rf "$tmp/csv"
			fi
		done
		if ! cmp -s "$tmp/old.out" "$tmp/new.out" || ! cmp -s "$tmp/old.err" "$tmp/new.err"; then
			echo "DIFF: $f: ${view:-(default)}"
			diff "$tmp/old.out" "$tmp/new.out" | head -n 6
			diff "$tmp/old.err" "$tmp/new.err" | head -n 4
			status=1
		fi
	done <<VIEWS

--no-inline
--top all --no-children
--tree --top 10
--callers --top 10
--folded
--folded --no-inline
--flamegraph -
--json
--speedscope -
--pprof $tmp/x.pprof
--lines --top 15
--hot-lines --top 8
-s comm,dso --top all
-s srcline --top 15
-s tid,cpu --top 15
--full-names --top all
--list
--csv $tmp/csv
--diff $f
VIEWS
done
[ $status -eq 0 ] && echo "identical: $# files"
exit $status
