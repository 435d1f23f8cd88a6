#!/bin/sh
# AUTOPROF_MEMORY across exec, and the estimates at small intervals.
# tests/progs/memexec: "exec" leaks 50 x 1 MiB and execs /bin/true without a
# CPU sample (AUTOPROF_FREQ=1): the image's file stays, with its allocations
# and live set (an image hands its name on only when it took no sample of
# either kind). "failexec" leaks 1 MiB (first_site), execs a missing file,
# then leaks 2 MiB more (second_site): the live set written before the exec
# is retired by the one at exit, so the file counts 3 MiB in 2 blocks, not
# 4 MiB in 3 (perf report, perf script, autoprof-report; as the first
# process, a descendant, and under the launcher). "small N": N x malloc(4)
# at AUTOPROF_MEMORY_INTERVAL=8 and 16: the estimated bytes within 1% of the
# truth over 3 runs (a gap that is not exactly of mean I biases them: an
# exponential truncated to whole bytes gave +4.9% at 8, +3% at 16).
. "$(dirname "$0")/lib.sh"
needs "$B/progs/memexec"
plan 13

P=$B/progs
A=$B/autoprof

. "$ROOT/tests/memlib.sh" # bytes, at

# profile OUT ARGS...: run ARGS under both libraries with memory profiling into OUT.
profile() {
	_out=$1
	shift
	timeout -s KILL 60 env AUTOPROF_MEMORY=1 AUTOPROF_OUTPUT="$_out" LD_PRELOAD="$MEMPRELOAD" "$@"
}

# script_sum FILE EVENT SYMBOL: the periods of EVENT's records whose leaf is SYMBOL (perf script).
script_sum() {
	perf script -i "$1" -F event,period,ip,sym 2>>perf.err |
		awk -v e="$2:" -v s="$3" '$2 == e { want = 1; p = $1; next }
			want && NF { if ($2 == s) n += p; want = 0 } END { print n + 0 }'
}

# leaks_total FILE: the live bytes autoprof-report --leaks counts.
leaks_total() {
	"$REPORT" --leaks "$1" 2>>report.err | sed -n 's/^(live-bytes: \([0-9]*\) bytes.*/\1/p'
}

# ---- an image that execs with allocation samples and no CPU sample keeps its file ----
AUTOPROF_FREQ=1 profile e.data "$P/memexec" exec >e.out 2>e.err
echo $? >e.rc
is "$(cat e.rc)" 0 "exec: /bin/true's exit status"
got="$(at e.data alloc-bytes big_site) $(at e.data live-bytes big_site)"
is "$got" "52428800 52428800" "exec without CPU samples: the image's file holds its 50 MiB allocated and live at the exec (perf report)" ||
	{ ls >&2; diag_file e.err; }
timeout -s KILL 60 "$A" -q --memory -F 1 -o l.data -- "$P/memexec" exec >l.out 2>l.err
is "$(leaks_total l.data)" 52428800 "the launcher's file: autoprof-report --leaks counts the 50 MiB (not 'Leaks: none')" ||
	diag_file l.err

# ---- a failed exec: the live set at the exec is retired by the one at exit ----
timeout -s KILL 60 "$P/memexec" failexec >plain.out 2>plain.err
echo $? >plain.rc
profile f.data "$P/memexec" failexec >f.out 2>f.err
echo $? >f.rc
cmp -s plain.out f.out && cmp -s plain.rc f.rc && [ "$(cat f.rc)" = 0 ]
ok $? "failexec: same output and exit status as without the library" || diag_file f.err
got="$(at f.data live-bytes first_site) $(at f.data live-bytes second_site)"
is "$got" "1048576 2097152" "failed exec: live bytes at each site counted once (perf report)"
got="$(script_sum f.data live-bytes first_site) $(script_sum f.data live-bytes second_site)"
is "$got" "1048576 2097152" "failed exec: the same from perf script's periods"
"$REPORT" --leaks f.data >f.leaks 2>>report.err
awk '$3 ~ /%$/ && ($4 == "first_site" || $4 == "second_site") { print $4, $1, $2 }' f.leaks |
	sort >f.sites
printf 'first_site 1048576 1\nsecond_site 2097152 1\n' >f.want
cmp -s f.sites f.want
ok $? "failed exec: autoprof-report --leaks: 1 MiB in 1 object and 2 MiB in 1 object" ||
	diag_file f.leaks

# a descendant's image (its file made at its first flush)
profile d.data sh -c "$P/memexec failexec; true" >d.out 2>d.err
child=$(ls d.data.* 2>/dev/null | grep -v '\.stat$' | head -1)
got="$(at "$child" live-bytes first_site) $(at "$child" live-bytes second_site)"
is "$got" "1048576 2097152" "failed exec in a descendant: live bytes counted once" || { ls >&2; diag_file d.err; }

timeout -s KILL 60 "$A" -q --memory -o m.data -- "$P/memexec" failexec >m.out 2>m.err
got="$(at m.data live-bytes first_site) $(at m.data live-bytes second_site)"
is "$got" "1048576 2097152" "failed exec under the launcher (one file): live bytes counted once" ||
	diag_file m.err

# ---- small intervals: the estimates unbiased ----
N=400000
for I in 8 16; do
	sum=0
	for r in 1 2 3; do
		AUTOPROF_MEMORY_INTERVAL=$I profile s$I.$r.data "$P/memexec" small $N >s.out 2>>s.err
		sum=$((sum + $(at s$I.$r.data alloc-bytes tiny_site)))
	done
	ratio=$(awk -v g=$sum -v t=$((3 * 4 * N)) 'BEGIN { printf "%.4f", g / t }')
	within "$ratio" 0.99 1.01 "AUTOPROF_MEMORY_INTERVAL=$I: $N x malloc(4), estimated bytes over 3 runs within 1% of the truth"
done
got=$(AUTOPROF_MEMORY_INTERVAL=1 profile s1.data "$P/memexec" small 1000 2>>s.err)
is "$got $(at s1.data alloc-bytes tiny_site)" "allocated 4000 4000" "AUTOPROF_MEMORY_INTERVAL=1: exact"

# ---- real readers take every file ----
bad=""
for f in e.data l.data f.data m.data "$child"; do
	perf script -i "$f" >/dev/null 2>>perf.err || bad="$bad perf-script:$f"
	"$PERFPARSER" --input "$f" --print-stats >/dev/null 2>&1 || bad="$bad perfparser:$f"
done
[ -z "$bad" ]
ok $? "perf script and hotspot's parser read every file" || diag "failed:$bad"
done_testing
