#!/bin/sh
# report-buildid.t - objects found by the build ids a file records, where
# perf finds them: the build-id cache `perf record` fills (~/.debug/.build-id/
# xx/rest/elf, .../vdso; $PERF_BUILDID_DIR in its place), used when the
# program at the recorded path is gone or is another build; and [vdso]
# named from perf's cached copy or this machine's vdso when the build ids
# match, in perf's files and in ours (which record the vdso's build id); the
# kernel of a file from another kernel release named from the kallsyms perf
# cached of it.
. "$(dirname "$0")/lib.sh"

needs "$B/progs/tickrate" "$B/progs/split" "$B/autoprof"
plan 11

# self NAME FILE [HOME]: NAME's self share in our table, or empty.
self() {
	HOME=${3:-$T/none} timeout -s KILL 60 "$REPORT" --no-inline --top all --no-children "$2" \
		2>/dev/null | awk -v s="$1" '$1 ~ /%$/ && $3 == s { sub(/%/, "", $1); print $1; exit }'
}
# perf_self NAME FILE HOME: NAME's self share in perf report with HOME's cache.
perf_self() {
	HOME=$3 timeout -s KILL 60 perf report -i "$2" --stdio --no-children --no-inline \
		--sort sym 2>/dev/null | awk -v s="$1" '$1 ~ /%$/ && $NF == s { sub(/%/, "", $1); print $1; exit }'
}
# close A B: both set and within 0.5 point.
close() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; exit !(a != "" && b != "" && d <= 0.5 && d >= -0.5) }'; }

mkdir -p bin home none
cp "$B/progs/tickrate" bin/tickrate
# tickrate's time is its main loop and clock_gettime (partly in the vdso)
HOME=$T/home timeout -s KILL 60 perf record -q -F 1999 -g -o perf.data bin/tickrate 400 \
	>record.out 2>&1
ls home/.debug/.build-id/*/* >/dev/null 2>&1
ok $? "perf record filled the build-id cache under \$HOME/.debug"

want=$(perf_self __vdso_clock_gettime perf.data "$T/home")
got=$(self __vdso_clock_gettime perf.data "$T/home")
close "$got" "$want"
ok $? "[vdso]: __vdso_clock_gettime from perf's cached vdso, perf's share (ours ${got:-missing}%, perf ${want:-missing}%)"
got=$(self __vdso_clock_gettime perf.data)
close "$got" "$want"
ok $? "[vdso] with an empty cache: this machine's vdso, same build id (ours ${got:-missing}%)"

# The program is gone: its copy in the cache names its functions.
rm bin/tickrate
want=$(perf_self main perf.data "$T/home")
got=$(self main perf.data "$T/home")
close "$got" "$want"
ok $? "program deleted: main from the cached copy (ours ${got:-missing}%, perf ${want:-missing}%)"
got=$(PERF_BUILDID_DIR=$T/home/.debug self main perf.data)
close "$got" "$want"
ok $? "PERF_BUILDID_DIR names the cache in place of \$HOME/.debug (ours ${got:-missing}%)"
got=$(self main perf.data)
[ -z "$got" ]
ok $? "program deleted, no cache: no main (ours ${got:-none})"

# Another build at the path (a new file, not the cache's hard link): the cache's copy wins.
cp "$B/progs/split" bin/tickrate
got=$(self main perf.data "$T/home")
close "$got" "$want"
ok $? "another build at the path: main from the cached copy of the recorded build (ours ${got:-missing}%)"

# A file from another kernel (its release rewritten): /proc/kallsyms is not
# its kernel's, the kallsyms perf cached of the recorded kernel's build id is.
rel=$(uname -r)
fake=$(printf '%s' "$rel" | sed 's/.$/X/')
perl -pe "s/\Q$rel\E/$fake/g" perf.data >other.data
top_kernel() { # FILE HOME: the first row of the self table in [kernel.kallsyms], or [kernel]
	HOME=$2 timeout -s KILL 60 "$REPORT" --no-children --top all "$1" 2>/dev/null |
		awk '$4 == "[kernel.kallsyms]" || $4 == "[kernel]" { print $3; exit }'
}
want=$(top_kernel perf.data "$T/home")
got=$(top_kernel other.data "$T/home")
[ -n "$want" ] && [ "$want" != "[kernel]" ] && [ "$got" = "$want" ] && grep -q "$fake" other.data
ok $? "another kernel release: kernel functions from perf's cached kallsyms (ours $got, this kernel's $want)"
got=$(top_kernel other.data "$T/none")
[ "$got" = "[kernel]" ]
ok $? "another kernel release, no cache: [kernel] (ours $got)"

# Our own files record the vdso's build id: [vdso] named as perf names it.
timeout -s KILL 60 "$B/autoprof" -F 1999 -o ours.data -- "$B/progs/tickrate" 400 >/dev/null 2>&1
perf buildid-list -i ours.data 2>/dev/null | grep -q ' \[vdso\]$'
ok $? "our file records the vdso's build id (perf buildid-list)"
want=$(perf_self __vdso_clock_gettime ours.data "$HOME")
got=$(self __vdso_clock_gettime ours.data)
close "$got" "$want"
ok $? "our file: __vdso_clock_gettime, perf's share (ours ${got:-missing}%, perf ${want:-missing}%)"
done_testing
