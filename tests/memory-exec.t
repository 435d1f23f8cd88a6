#!/bin/sh
# AUTOPROF_MEMORY across exec, and the estimates at small intervals.
# tests/progs/memexec: "exec" leaks 50 x 1 MiB and execs /bin/true without a
# CPU sample (AUTOPROF_FREQ=1): the image's file stays, with its allocations
# and live set. "smallexec" allocates less than one interval (1000 x 1000
# bytes at AUTOPROF_MEMORY_INTERVAL=1 MiB; a sample in about 6 runs of 10)
# and execs: it hands its name on all the same, in every run (its exact
# bytes decide, not the chance of a sample). "failexec" leaks 1 MiB
# (first_site), execs a script whose interpreter is missing (the exec fails
# after the library finished its file), then leaks 2 MiB more (second_site):
# the live set written before the exec
# is retired by the one at exit, so the file counts 3 MiB in 2 blocks, not
# 4 MiB in 3 (perf report, perf script, autoprof-report; as the first
# process, a descendant, and under the launcher). "small N": N x malloc(4)
# at AUTOPROF_MEMORY_INTERVAL=8 and 16: the estimated bytes within 1% of the
# truth over 3 runs (a gap that is not exactly of mean I biases them: an
# exponential truncated to whole bytes gave +4.9% at 8, +3% at 16).
# "smallfail" (below one interval: the name handed on) fails its exec and goes
# on: its file has both sites' bytes (the first process), or a descendant's
# new file counts from zero and states the removed one's bytes; "pathexec"
# searches a path with execs that fail before one that runs (of paths that do
# not exist: the library lets them fail without finishing its file).
# libctoralloc.so's constructor runs before libautoprof.so's and leaks
# 1,000,000 bytes: not in the profile, and autoprof-report says so.
. "$(dirname "$0")/lib.sh"
needs "$B/progs/memexec" "$B/progs/libctoralloc.so"
plan 26

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

# ---- an image that allocated less than one interval hands its name on, sampled or not ----
bad="" sampled=0
for i in 1 2 3 4 5 6 7 8; do
	AUTOPROF_FREQ=1 AUTOPROF_VERBOSE=1 AUTOPROF_MEMORY_INTERVAL=1048576 \
		profile x$i.data "$P/memexec" smallexec >/dev/null 2>x.err
	n=$(sed -n 's/.*memory: \([0-9]*\) allocation samples.*/\1/p' x.err | head -1)
	sampled=$((sampled + ${n:-0}))
	[ "$(ls x$i.data* | grep -cv '\.stat$')" = 1 ] || bad="$bad x$i:$(ls x$i.data* | tr '\n' ' ')"
	[ "$(perf script -i x$i.data -F comm 2>>perf.err | sort -u | tr -d ' ')" = true ] || bad="$bad comm$i"
done
[ -z "$bad" ]
ok $? "an image below one interval hands its name to the exec'd image in 8 of 8 runs ($sampled of its allocations sampled)" ||
	diag "$bad"

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

# ---- a failed exec of an image that hands its name on (below one interval) ----
# smallfail: less_site() leaks 100 x 1000 bytes, the exec fails, more_site()
# leaks 100 x 2000; at AUTOPROF_MEMORY_INTERVAL=1 the file has the truth. The
# run's first process left its finished file for the next image, and a new one
# replaced it: alloc-bytes lost less_site (0, its live bytes 100000), while the
# end said 201 samples for a file of 101.
AUTOPROF_MEMORY_INTERVAL=1 AUTOPROF_VERBOSE=1 profile sf.data "$P/memexec" smallfail >sf.out 2>sf.err
got="$(cat sf.out) $(at sf.data alloc-bytes less_site) $(at sf.data alloc-bytes more_site)"
got="$got $(at sf.data live-bytes less_site) $(at sf.data live-bytes more_site)"
is "$got" "exec failed 100000 200000 100000 200000" \
	"failed exec after the name was handed on (first process): allocated and live bytes at both sites" ||
	diag_file sf.err
said=$(sed -n 's/.*memory: \([0-9]*\) allocation samples.*/\1/p' sf.err | tail -1)
infile=$(perf script -i sf.data -F event 2>>perf.err | grep -c alloc-bytes)
is "$said" "$infile" "...the samples said at the end are the file's"
timeout -s KILL 60 "$A" -q --memory --memory-interval 1 -o sl.data -- "$P/memexec" smallfail >sl.out 2>sl.err
got="$(at sl.data alloc-bytes less_site) $(at sl.data alloc-bytes more_site)"
is "$got" "100000 200000" "...and under the launcher" || diag_file sl.err
# a descendant's file is removed for the exec: the new one counts from zero
# and says what the removed one held (it said nothing, and counted 201);
# AUTOPROF_TOP names another process the run's first: memexec is a descendant
AUTOPROF_MEMORY_INTERVAL=1 AUTOPROF_VERBOSE=1 AUTOPROF_TOP=1 profile "$PWD/sd.data" "$P/memexec" smallfail \
	>sd.out 2>sd.err
sdc=$(ls sd.data.* 2>/dev/null | grep -v '\.stat$' | head -1)
got="$(at "$sdc" alloc-bytes more_site) $(at "$sdc" live-bytes less_site) $(at "$sdc" live-bytes more_site)"
is "$got" "200000 100000 200000" "failed exec in a descendant after the name was handed on: the new file's bytes" ||
	diag_file sd.err
if [ "$(at "$sdc" alloc-bytes less_site)" = 100000 ]; then
	# the image took a CPU sample before its exec (a slow start): its file is
	# kept, not removed, and holds those bytes itself: nothing to say apart
	! "$REPORT" --leaks "$sdc" 2>>report.err | grep -q '^Not sampled'
else
	"$REPORT" --leaks "$sdc" 2>>report.err | grep -q '^Not sampled: 100000 bytes'
fi
ok $? "...and autoprof-report says the 100000 bytes of the removed file (or the kept file holds them)"
said=$(sed -n 's/.*memory: \([0-9]*\) allocation samples (\([0-9]*\) bytes.*/\1 \2/p' sd.err | tail -1)
infile=$(perf script -i "$sdc" -F event,period 2>>perf.err | awk '$2 == "alloc-bytes:" && $1 > 0 { n++; b += $1 } END { print n + 0, b + 0 }')
is "$said" "$infile" "...and the samples and bytes said at its end are the file's"

# pathexec: a search of the path in the program (os.execvp): two execs fail,
# the third runs true, which takes the name: one file, true's
timeout -s KILL 60 "$A" -q --memory --memory-interval 1 -o pe.data -- "$P/memexec" pathexec >pe.out 2>pe.err
echo $? >pe.rc
# (memexec's own image, before the execs, takes a sample or two where a start is slow:
# the run's one file holds it too, beside true's)
got="$(cat pe.rc) $(ls pe.data* | grep -cv '\.stat$') $(perf script -i pe.data -F comm 2>>perf.err | tr -d ' ' | grep -vx memexec | sort -u)"
is "$got" "0 1 true" "a path searched by execs that fail, then one that runs: one file, the last image's" ||
	diag_file pe.err

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

# ---- allocations before profiling started: stated ----
timeout -s KILL 60 env AUTOPROF_MEMORY=1 AUTOPROF_MEMORY_INTERVAL=1 AUTOPROF_OUTPUT=c.data \
	LD_PRELOAD="$MEMPRELOAD $P/libctoralloc.so" "$P/memexec" small 10 >c.out 2>c.err
is "$(at c.data alloc-bytes ctor_site) $(at c.data live-bytes ctor_site)" "0 0" \
	"a constructor run before libautoprof.so's: its allocations are not in the profile"
"$REPORT" --leaks c.data >c.leaks 2>>report.err
grep -q '^Not sampled: 1000000 bytes in allocations before profiling started are not in the profile' c.leaks
ok $? "autoprof-report --leaks says the 1000000 bytes allocated before profiling started" ||
	diag_file c.leaks
"$REPORT" c.data >c.report 2>>report.err
grep -q '^Not sampled: 1000000 bytes' c.report
ok $? "...and so does its summary" || diag_file c.report
LD_PRELOAD="$P/libctoralloc.so" timeout -s KILL 60 "$A" -q --memory -o cl.data -- "$P/memexec" small 10 \
	>/dev/null 2>cl.err
"$REPORT" --leaks cl.data 2>>report.err | grep -q '^Not sampled: 1000000 bytes'
ok $? "...and the launcher's one file" || diag_file cl.err
AUTOPROF_MEMORY_INTERVAL=1 profile c0.data "$P/memexec" small 10 >/dev/null 2>c0.err
"$REPORT" --leaks c0.data >c0.leaks 2>>report.err
"$REPORT" c0.data >>c0.leaks 2>>report.err
! grep -q 'Not sampled' c0.leaks && grep -q '^Leaks:' c0.leaks
ok $? "without such a constructor nothing is said (the profiler's own start is not counted)" ||
	diag_file c0.leaks

# ---- real readers take every file ----
bad=""
for f in e.data l.data f.data m.data "$child" c.data cl.data sf.data sl.data "$sdc" pe.data; do
	perf script -i "$f" >/dev/null 2>>perf.err || bad="$bad perf-script:$f"
	"$PERFPARSER" --input "$f" --print-stats >/dev/null 2>&1 || bad="$bad perfparser:$f"
done
[ -z "$bad" ]
ok $? "perf script and hotspot's parser read every file" || diag "failed:$bad"
done_testing
