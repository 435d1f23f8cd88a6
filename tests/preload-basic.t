#!/bin/sh
# The first end-to-end slice: LD_PRELOAD the library into a CPU-bound -O2
# program without frame pointers, and check the file with perf, perf script,
# hotspot's parser and autoprof-report.
. "$(dirname "$0")/lib.sh"
plan 20

SPLIT=$B/progs/split
"$SPLIT" 100 >plain.out 2>plain.err
plain_rc=$?
steal_mark
LD_PRELOAD=$LIB "$SPLIT" 1500 >prof.out 2>prof.err
rc=$?
stolen=$(stolen_ms)
is "$rc" "$plain_rc" "exit status is the program's own"
cmp -s plain.out prof.out
ok $? "stdout is unchanged by the library"
grep -v '^autoprof: no hardware ' prof.err >prof.err.rest
clean_stderr prof.err.rest
ok $? "nothing on stderr but the one line about the event" || diag_file prof.err

[ -f perf.data ]
ok $? "perf.data was written"
is "$(stat -c %a perf.data)" 600 "perf.data has mode 0600"

perf report -i perf.data --stdio >report.txt 2>report.err
ok $? "perf report reads the file"
clean_stderr report.err
ok $? "perf report prints nothing on stderr" || diag_file report.err
perf_script perf.data >script.txt
ok $? "perf script reads the file"
cp perf.data.err script.err
clean_stderr script.err
ok $? "perf script prints nothing on stderr" || diag_file script.err

heavy=$(perf_share perf.data heavy_two_thirds)
light=$(perf_share perf.data light_one_third)
within "$heavy" 63 70 "heavy_two_thirds has about 2/3 of the samples"
within "$light" 30 37 "light_one_third has about 1/3 of the samples"

# A sample's stack, in perf script, is its lines up to a blank line.
awk 'BEGIN { RS = "" } { n++; if ($0 ~ /[ \t]main\+0x/) m++ } END { printf "%d %d\n", n, m }' \
	script.txt >stacks.txt
read -r nsamples nmain <stacks.txt
# cpu-clock also ticks while the host steals the VM: a sample per stolen ms more at most.
within "$nsamples" 1200 $((1700 + stolen)) "about 1500 samples at 1 kHz for 1.5 s of CPU"
within "$(awk -v a="$nmain" -v b="$nsamples" 'BEGIN { print (b ? 100 * a / b : 0) }')" 99 100 \
	"at least 99% of stacks reach main"
grep -q 'heavy_two_thirds+0x[0-9a-f]* (.*split)' script.txt &&
	grep -q 'work_loop+0x' script.txt
ok $? "perf script shows heavy_two_thirds called from work_loop"

if [ -x "$PERFPARSER" ]; then
	"$PERFPARSER" --input perf.data --print-stats >parser.txt 2>&1
	got=$(awk '/^samples:/ { print $2 }' parser.txt)
	is "$got" "$nsamples" "hotspot-perfparser reads as many samples as perf script"
	is "$(awk '/^samples time violations:/ { print $4 }' parser.txt)" 0 \
		"hotspot-perfparser sees the samples in time order"
else
	skip "hotspot-perfparser not installed"
	skip "hotspot-perfparser not installed"
fi

"$REPORT" --no-inline perf.data >ours.txt 2>ours.err
ours=$(awk 'NF >= 2 && ($NF == "heavy_two_thirds" || $(NF-1) == "heavy_two_thirds") { sub(/%/, "", $1); print $1; exit }' ours.txt)
within "$(awk -v a="$ours" -v b="$heavy" 'BEGIN { d = a - b; if (a == "") d = 99; print d < 0 ? -d : d }')" 0 0.5 \
	"autoprof-report's share of heavy_two_thirds matches perf report's" || diag_file ours.txt

# What a sample costs the program: libunwind's fast trace walks the stack
# (no DWARF step per frame), and libunwind's sigprocmask calls around its
# cache lock, two per frame, are skipped in the handler, whose mask blocks
# every asynchronous signal already.
strace -f -qq -c -o strace.txt -E LD_PRELOAD="$LIB" -E AUTOPROF_VERBOSE=1 -E AUTOPROF_OUTPUT=v.data \
	"$SPLIT" 500 >/dev/null 2>verbose.err
vs=$(nsamples v.data)
slow=$(sed -n 's/.*samples, \([0-9]*\) by DWARF steps.*/\1/p' verbose.err)
within "$slow" 0 $((vs / 100)) "the fast trace unwinds at least 99% of $vs samples ($slow by DWARF steps)" ||
	diag_file verbose.err
# The library makes a fixed number of sigprocmask calls (setup, thread start,
# the end: 179 here, whatever the run's length); what must not grow with the
# samples is the per-frame pair. The reference is the same program run a
# quarter as long under the same strace: the difference in calls must stay
# under a quarter of the difference in samples (2 per frame would be 8 or
# more per sample on split's stacks).
strace -f -qq -c -o strace-short.txt -E LD_PRELOAD="$LIB" -E AUTOPROF_OUTPUT=short.data \
	"$SPLIT" 125 >/dev/null 2>/dev/null
vshort=$(nsamples short.data)
masks=$(awk '$NF == "rt_sigprocmask" { print $4 }' strace.txt)
mshort=$(awk '$NF == "rt_sigprocmask" { print $4 }' strace-short.txt)
grow=$((${masks:-0} - ${mshort:-0}))
within "$grow" -1000000 $(((vs - vshort) / 4)) \
	"sigprocmask calls do not grow with samples ($mshort for $vshort samples, $masks for $vs)" ||
	diag_file strace.txt
grep -q 'unwinding: [0-9.]* us and [0-9.]* frames per sample' verbose.err
ok $? "AUTOPROF_VERBOSE says what unwinding cost per sample" || diag_file verbose.err
done_testing
