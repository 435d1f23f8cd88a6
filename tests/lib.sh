# lib.sh - TAP 13 helpers for the integration tests (sourced by tests/*.t).
#
# Each .t runs from the repository root with build/ already made, in a fresh
# temporary directory ($T) that is removed at exit.

ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=$ROOT/build
LIB=$B/libautoprof.so
REPORT=$B/autoprof-report
PERFPARSER=/usr/lib/x86_64-linux-gnu/libexec/hotspot-perfparser
T=$(mktemp -d /tmp/autoprof-test.XXXXXX)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1

_n=0
_failed=0

plan() { echo "TAP version 13"; echo "1..$1"; }

# ok COND_STATUS "description": pass when the status is 0; returns 1 on a
# failure, so that `ok ... || diag_file F` says why.
ok() {
	_n=$((_n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $_n - $2"
	else
		echo "not ok $_n - $2"
		_failed=$((_failed + 1))
		return 1
	fi
}

# is GOT WANT "description"
is() {
	[ "$1" = "$2" ]
	ok $? "$3" || { diag "got '$1', want '$2'"; return 1; }
}

# within GOT LO HI "description": a number in [LO, HI].
within() {
	awk -v g="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(g != "" && g + 0 >= lo && g + 0 <= hi) }'
	_s=$?
	ok $_s "$4 ($1 in [$2, $3])"
}

# Time the VM lost to the host (steal) or to interrupts, which the kernel's
# task-clock and cpu-clock include and CPU-time clocks (CLOCK_*_CPUTIME_ID,
# rusage) do not: on a busy host it inflates counts by 10-20%. steal_mark
# starts a window; stolen_ms prints the machine-wide ms lost since, an upper
# bound for what any of our tasks lost.
_stolen_ticks() { awk '$1 == "cpu" { print $7 + $8 + $9; exit }' /proc/stat; }
steal_mark() { _steal0=$(_stolen_ticks); }
stolen_ms() { echo $((($(_stolen_ticks) - _steal0) * 1000 / $(getconf CLK_TCK))); }

# needs FILE...: stop with a plan of 0 and the reason when a program the test
# runs is not built, or perf is missing (make check builds and installs both).
needs() {
	for _f in "$@"; do
		if [ ! -x "$_f" ]; then
			echo "1..0 # SKIP $_f is not built (run make)"
			exit 0
		fi
	done
	if ! command -v perf >/dev/null 2>&1; then
		echo "1..0 # SKIP perf is not installed"
		exit 0
	fi
}

# ctl_dir: the folder where `autoprof ctl` finds its endpoints and replies.
ctl_dir() {
	_d=${XDG_RUNTIME_DIR:+$XDG_RUNTIME_DIR/autoprof}
	[ -n "$_d" ] && [ -d "$_d" ] || _d=/tmp/autoprof-$(id -u)
	echo "$_d"
}
# until_ok CMD...: run CMD every 0.1 s until it succeeds (at most 5 s).
until_ok() {
	for _i in $(seq 50); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}
skip() { _n=$((_n + 1)); echo "ok $_n # SKIP $1"; }
# diag, diag_file: on stderr, which prove shows without -v (CI's log has them)
diag() { echo "# $*" >&2; }
diag_file() { sed 's/^/#   /' "$1" >&2; }
done_testing() { exit $((_failed > 254 ? 254 : _failed)); }

# perf_share FILE SYMBOL: SYMBOL's self share in `perf report --no-children`, or empty.
# An address without a symbol, OBJECT+0xOFF in our reports, is 0x and OFF in 16 digits in
# perf's (an unnamed function of this kernel's vdso: [vdso]+0x79d is 0x000000000000079d).
perf_share() {
	perf report -i "$1" --stdio --no-children --sort sym 2>/dev/null |
		awk -v s="$2" 'BEGIN {
				if (match(s, /\+0x[0-9a-f]+$/)) {
					h = substr(s, RSTART + 3)
					while (length(h) < 16) h = "0" h
					a = "0x" h
				}
			}
			$1 ~ /%$/ && ($NF == s || (a != "" && $NF == a)) { sub(/%/, "", $1); print $1; exit }'
}

# clean_stderr FILE: true when FILE (a reader's stderr) is empty.
clean_stderr() { [ ! -s "$1" ]; }

# perf_script FILE [ARGS...]: perf script's samples, without the table of
# counter totals it prints first for the STAT records; stderr to FILE.err.
perf_script() {
	_f=$1
	shift
	perf script -i "$_f" "$@" 2>"$_f.err" |
		awk '/^CPU +THREAD +VAL/ { table = 1; next }
			table && NF == 7 && $1 ~ /^-?[0-9]+$/ && $3 ~ /^[0-9]+$/ && $6 ~ /^[0-9]+$/ { next }
			{ table = 0; print }'
}

# nsamples FILE: how many samples perf script finds in FILE.
nsamples() { perf_script "$1" -F time | grep -c .; }

# browser_dump SVG CHECKS.js [WIDTH HEIGHT]: open SVG inline in an HTML page in
# headless Chromium (window WIDTHxHEIGHT, default 1280x800) with
# tests/browser/check.js and CHECKS.js (which defines run_checks() and calls
# report(KEY, VALUE)); print the "KEY=VALUE" lines it reported. Needs chromium.
browser_dump() {
	_page=$(mktemp "$T/page.XXXXXX").html
	{
		printf '<!DOCTYPE html>\n<html><head><meta charset="utf-8">'
		printf '<style>body { margin: 0; }</style></head><body>\n'
		sed '1{/^<?xml/d}' "$1"
		printf '<script>\n'
		cat "$ROOT/tests/browser/check.js" "$2"
		printf '</script>\n</body></html>\n'
	} >"$_page"
	timeout 60 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--no-first-run --user-data-dir="$T/chromium" --window-size="${3:-1280},${4:-800}" \
		--virtual-time-budget=5000 --dump-dom "file://$_page" 2>"$_page.err" |
		sed -n 's/^@@ //p' | sed 's/&lt;/</g; s/&gt;/>/g; s/&quot;/"/g; s/&amp;/\&/g'
}

# report_views FILE OUT: every view of FILE (autoprof-report), stdout and
# stderr, into OUT: the views whose output depends on every sample and record,
# for tests that compare two ways of reading a file byte for byte. The comm
# and dso filters name the test programs that record such files.
report_views() {
	rm -rf "$2.csv"
	{
		"$REPORT" "$1"
		"$REPORT" -s comm,pid,tid "$1"
		"$REPORT" -s dso,sym -n 50 "$1"
		"$REPORT" --lines --no-children "$1"
		"$REPORT" --folded "$1"
		"$REPORT" --json --lines "$1"
		"$REPORT" --tree "$1"
		"$REPORT" --tree --callers --min-percent 0 "$1"
		"$REPORT" --flamegraph - "$1"
		"$REPORT" --comm threads,mtwork,truth --dso mtwork,threads,truth,libc.so.6 "$1"
		"$REPORT" --comm mtwork -s comm,tid "$1"
		"$REPORT" --time 0.1, "$1"
		"$REPORT" --csv "$2.csv" "$1" && cat "$2.csv"/*.csv
	} >"$2" 2>&1
}

# same_views A B MESSAGE: ok when files A and B are the same (the first lines
# of their diff as diagnostics when not).
same_views() {
	cmp -s "$1" "$2" || diff "$1" "$2" | head -20 | sed 's/^/# /'
	cmp -s "$1" "$2"
	ok $? "$3"
}
