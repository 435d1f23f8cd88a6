#!/bin/sh
# outside.sh - autoprof's outside mode against perf record on the same
# programs (issue 20; doc/outside.md): a gcc -static -O2 C program, a
# musl-static one, raw clone threads, Go with CGO_ENABLED=0 (static and PIE),
# and a process attached with -p. For each: samples of each tool at the same
# frequency, autoprof's as a share of perf's, and the share of samples whose
# stack reaches the root (main, the clone entry, runtime.goexit/main.main);
# perf uses --call-graph dwarf for C and -g (frame pointers) for Go, as
# autoprof does; perf samples user code only (--all-user), as autoprof
# does without -k. No timing: sample counts and stack shapes only. Both
# tools sample the same pid for -p, one after the other: autoprof for 2 s
# (--duration), perf for 3 s of which its start-up takes a part, so the -p
# row compares stack shapes more than counts.
#
#   sh scripts/bench/outside.sh [RUNS]    (default 5 runs of each; run from the repository)
#
# Prints one Markdown table row per program (medians over the runs), with
# each tool's top function by self time and its share.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=$ROOT/build
A=$B/autoprof
SRC=$ROOT/tests/outside
RUNS=${1:-5}
W=$(mktemp -d /tmp/autoprof-outside-bench.XXXXXX)
trap 'rm -rf "$W"' EXIT
cd "$W" || exit 1

cc -static -O2 -g -o hot-static "$SRC/hot.c" || exit 1
cc -O2 -g -pthread -o late "$SRC/late.c" || exit 1
command -v musl-gcc >/dev/null && musl-gcc -static -O2 -g -o hot-musl "$SRC/hot.c"
GO=$(command -v go || echo /usr/lib/go/bin/go)
if [ -x "$GO" ]; then
	for mode in static pie; do
		flags=
		[ $mode = pie ] && flags=-buildmode=pie
		GOCACHE=$B/outside-go/gocache GOPATH=$B/outside-go/gopath GOFLAGS=-mod=mod \
			GOPROXY=off GO111MODULE=off CGO_ENABLED=0 timeout -s KILL 200 \
			"$GO" build $flags -o "go-$mode" "$SRC/spin.go"
	done
fi

# shape FILE ROOT: "samples reaching" from perf script.
shape() {
	perf script -i "$1" -F tid,ip,sym 2>/dev/null | awk -v r="$2" '
		function flush() { if (n) { s++; if (hr) ok++ } n = hr = 0 }
		/^[ \t]*[0-9]+[ \t]*$/ { flush(); n = 1; next }
		/^[ \t]*$/ { flush(); next }
		{ if ($2 ~ "^" r "(\\+|$)") hr = 1 }
		END { flush(); printf "%d %d\n", s, ok }'
}

# top FILE: the top function by self share and its share ("sym 97.5").
top() {
	perf report -i "$1" --stdio --no-children --sort sym 2>/dev/null |
		awk '$1 ~ /%$/ { sub(/%/, "", $1); print $NF, $1; exit }'
}

median() { sort -n | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : 0 }'; }

# bench NAME ROOT PERF_CG CMD...: RUNS runs of each tool.
bench() {
	_name=$1 _root=$2 _cg=$3
	shift 3
	: >"$_name.a" && : >"$_name.p" && : >"$_name.at" && : >"$_name.pt"
	for _i in $(seq "$RUNS"); do
		timeout -s KILL 60 "$A" -q -F 1000 -o a.data "$@" >/dev/null 2>&1
		shape a.data "$_root" >>"$_name.a"
		top a.data >>"$_name.at"
		timeout -s KILL 60 perf record -q --all-user -F 1000 $_cg -o p.data -- "$@" >/dev/null 2>&1
		shape p.data "$_root" >>"$_name.p"
		top p.data >>"$_name.pt"
	done
	row "$_name" "$_root"
}

row() {
	as=$(awk '{ print $1 }' "$1.a" | median)
	ps=$(awk '{ print $1 }' "$1.p" | median)
	ar=$(awk '{ print $1 ? 100 * $2 / $1 : 0 }' "$1.a" | median)
	pr=$(awk '{ print $1 ? 100 * $2 / $1 : 0 }' "$1.p" | median)
	at=$(awk '{ print $2 }' "$1.at" | median)
	pt=$(awk '{ print $2 }' "$1.pt" | median)
	printf '| %s | %s | %s | %s%% | %s%% | %s%% | %s %s%% | %s %s%% | %s |\n' "$1" "$as" "$ps" \
		"$(awk -v a="$as" -v p="$ps" 'BEGIN { printf "%.1f", p ? 100 * a / p : 0 }')" \
		"$ar" "$pr" "$(awk 'NR == 1 { print $1 }' "$1.at")" "$at" \
		"$(awk 'NR == 1 { print $1 }' "$1.pt")" "$pt" "$2"
}

echo "| program | autoprof samples | perf samples | autoprof/perf | autoprof stacks reaching root | perf stacks reaching root | autoprof top function | perf top function | root |"
echo "|---|---|---|---|---|---|---|---|---|"
DW="--call-graph dwarf"
bench gcc-static main "$DW" ./hot-static 8
[ -x hot-musl ] && bench musl-static main "$DW" ./hot-musl 8
bench raw-clone "(main|clone_body)" "$DW" ./hot-static clone tls
bench fork-exec main "$DW" ./hot-static fork ./hot-static
[ -x go-static ] && bench go-static "runtime.goexit.abi0|runtime.main" -g ./go-static
[ -x go-pie ] && bench go-pie "runtime.goexit.abi0|runtime.main" -g ./go-pie

# -p: the same process attached by each tool in turn.
: >attach.a && : >attach.p && : >attach.at && : >attach.pt
for _i in $(seq "$RUNS"); do
	./late 9 >/dev/null &
	pid=$!
	sleep 0.2
	timeout -s KILL 30 "$A" -q -o a.data -p $pid --duration 2
	sleep 0.1
	timeout -s INT 3 perf record -q --all-user -F 1000 $DW -o p.data -p $pid >/dev/null 2>&1
	wait $pid
	shape a.data "(main|late_thread)" >>attach.a
	shape p.data "(main|late_thread)" >>attach.p
	top a.data >>attach.at
	top p.data >>attach.pt
done
row attach "(main|late_thread)"
