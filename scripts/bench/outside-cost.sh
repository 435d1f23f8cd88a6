#!/bin/sh
# outside-cost.sh - the CPU cost of autoprof's outside mode against
# `perf record -g` at 1 kHz (issue 20: "Overhead at 1 kHz at or below perf
# record -g's"; doc/outside.md). For a static C program (gcc -static -O2, no
# frame pointers), a Go CGO_ENABLED=0 program and raw clone threads (the
# static C program's `clone tls 8` mode), it runs, interleaved in one loop
# (RUNS rounds, each running every mode of every program once, in turn):
#
#   plain       the program alone
#   autoprof    build/autoprof -F 1000 (outside mode: chosen by itself, static programs)
#   perf-g      perf record -g -F 1000 --all-user (frame-pointer chains)
#   perf-dwarf  perf record --call-graph dwarf -F 1000 --all-user (C programs only:
#               what autoprof does for code without frame pointers)
#   floor       perf record -F 1000 --all-user without -g: the bare kernel
#               event and its ring, with no stacks (no profiler can cost less
#               and still take a sample at each tick)
#
# The cost of a run is the CPU time (user + system) of the whole tree, the
# profiler's own process included (autoprof's launcher draining and unwinding,
# perf's process writing its file): /usr/bin/time's user and system times of
# the profiler command, which count every descendant it waited for. The table
# gives, per program and mode, the median over the rounds and its ratio to
# the program alone. A loaded machine makes every number noise: like every
# timing benchmark it refuses a busy one (scripts/bench/quiet.py, through
# its command line: the load average at the start, other processes' CPU
# during each round; exit status 3, one line), or with --busy-ok marks
# every figure.
#
#   sh scripts/bench/outside-cost.sh [--busy-ok] [--max-load L] [--max-foreign C]
#                                    [--quiet-wait S]   (RUNS=7 rounds; from the repository)
#   RUNS=1 EVENT=cycles sh scripts/bench/outside-cost.sh
#
# EVENT (default cpu-clock: the same event for both tools, and the one a VM
# without a PMU has) is passed to both as -e. Each program runs about 1.2-1.7 s
# of CPU; the profilers' start-up (perf's is about 0.1 s of CPU) counts in
# their cost: SCALE=N runs each N times longer, to weigh the per-sample cost
# over the fixed one. Output: a Markdown table on
# stdout; the raw times in $OUT (default build/bench/outside-cost.tsv).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=$ROOT/build
A=$B/autoprof
SRC=$ROOT/tests/outside
RUNS=${RUNS:-7}
SCALE=${SCALE:-1}
EVENT=${EVENT:-cpu-clock}
OUT=${OUT:-$B/bench/outside-cost.tsv}
case $OUT in /*) ;; *) OUT=$(pwd)/$OUT ;; esac
W=$(mktemp -d /tmp/autoprof-outside-cost.XXXXXX)
trap 'rm -rf "$W"' EXIT
mkdir -p "$(dirname "$OUT")"
for tool in perf /usr/bin/time cc; do
	command -v "$tool" >/dev/null 2>&1 || {
		echo "outside-cost.sh: $tool is missing (sh scripts/install-deps.sh bench)" >&2
		exit 1
	}
done
[ -x "$A" ] || {
	echo "outside-cost.sh: $A is missing (make all)" >&2
	exit 1
}
cd "$W" || exit 1
QUIET="python3 $ROOT/scripts/bench/quiet.py"
GUARD=$W/guard
$QUIET start outside-cost "$GUARD" "$@" || exit $?

cc -static -O2 -g -o hot-static "$SRC/hot.c" || exit 1
GO=$(command -v go || echo /usr/lib/go/bin/go)
if [ -x "$GO" ]; then
	mkdir -p "$B/outside-go/gocache" "$B/outside-go/gopath"
	GOCACHE=$B/outside-go/gocache GOPATH=$B/outside-go/gopath GOFLAGS=-mod=mod \
		GOPROXY=off GO111MODULE=off CGO_ENABLED=0 timeout -s KILL 200 \
		"$GO" build -o go-static "$SRC/spin.go" || echo "outside-cost.sh: go build failed" >&2
fi

# The programs: NAME and command; about 1-2 s of CPU each (times SCALE).
PROGRAMS="c-static raw-clone"
[ -x go-static ] && PROGRAMS="$PROGRAMS go-static"
command_of() {
	case $1 in
	c-static) echo "./hot-static $((15 * SCALE))" ;;
	raw-clone) echo "./hot-static clone tls $((8 * SCALE))" ;;
	go-static) echo "./go-static $((40 * SCALE))" ;;
	esac
}
# Its status (hot: 3, raw clones: 5, Go: 4), to tell a run that failed.
status_of() {
	case $1 in
	c-static) echo 3 ;;
	raw-clone) echo 5 ;;
	go-static) echo 4 ;;
	esac
}
modes_of() {
	case $1 in
	go-static) echo "plain autoprof perf-g floor" ;;
	*) echo "plain autoprof perf-g perf-dwarf floor" ;;
	esac
}

# run MODE CMD...: the CPU seconds (user + system) of the tree, or "fail".
run() {
	_mode=$1
	shift
	case $_mode in
	plain) set -- "$@" ;;
	autoprof) set -- "$A" -q -e "$EVENT" -F 1000 -o a.data -- "$@" ;;
	perf-g) set -- perf record -q -e "$EVENT" --all-user -F 1000 -g -o p.data -- "$@" ;;
	perf-dwarf) set -- perf record -q -e "$EVENT" --all-user -F 1000 --call-graph dwarf \
		-o p.data -- "$@" ;;
	floor) set -- perf record -q -e "$EVENT" --all-user -F 1000 -o p.data -- "$@" ;;
	esac
	timeout -s KILL 120 /usr/bin/time -f "%x %U %S" -o t.out "$@" >/dev/null 2>run.err
	awk -v want="$_want" '{ if ($1 == want || $1 == "") printf "%.3f\n", $2 + $3; else print "fail" }' \
		t.out | tail -1
}

printf 'program\tmode\tround\tcpu_s\n' >"$OUT"
for r in $(seq "$RUNS"); do
	times >"$W/times"
	$QUIET begin "$GUARD" "$W/times"
	for p in $PROGRAMS; do
		_want=$(status_of "$p")
		for m in $(modes_of "$p"); do
			v=$(run "$m" $(command_of "$p"))
			[ "$v" = fail ] && echo "outside-cost.sh: $p under $m failed: $(head -c 300 run.err)" >&2
			printf '%s\t%s\t%s\t%s\n' "$p" "$m" "$r" "$v" >>"$OUT"
			rm -f a.data* p.data*
		done
	done
	times >"$W/times"
	$QUIET end "$GUARD" "round $r" "$W/times" || exit $?
done
MARK=$($QUIET mark "$GUARD")

echo "Outside mode's CPU cost at 1 kHz ($EVENT), medians of $RUNS interleaved rounds."
echo "$($QUIET summary "$GUARD") The floor is perf record without -g"
echo "(the bare kernel event, no stacks). CPU = user + system of the whole tree, profiler included."
echo
echo "| program | mode | CPU s (median) | vs plain | overhead over plain |"
echo "|---|---|---|---|---|"
awk -F'\t' -v mark="$MARK" 'NR > 1 && $4 != "fail" { v[$1 "\t" $2] = v[$1 "\t" $2] " " $4; order[$1 "\t" $2] = NR }
	function median(s,   a, n, i, j, t) {
		n = split(s, a, " ")
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return n ? (n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2) : 0
	}
	END {
		for (k in v) m[k] = median(v[k])
		n = 0
		for (k in order) keys[++n] = k
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (order[keys[j]] < order[keys[i]]) { t = keys[i]; keys[i] = keys[j]; keys[j] = t }
		for (i = 1; i <= n; i++) {
			split(keys[i], pm, "\t")
			base = m[pm[1] "\tplain"]
			printf "| %s | %s | %.3f%s | %s | %s |\n", pm[1], pm[2], m[keys[i]], mark,
				base ? sprintf("%.3f%s", m[keys[i]] / base, mark) : "-",
				base ? sprintf("%+.1f%%%s", 100 * (m[keys[i]] - base) / base, mark) : "-"
		}
	}' "$OUT"
echo
echo "Raw times: $OUT"
