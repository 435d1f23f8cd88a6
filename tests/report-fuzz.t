#!/bin/sh
# report-fuzz.t - a short libFuzzer run (AUTOPROF_FUZZ_TIME seconds, 20 by
# default) of the perf.data reader over tests/fuzz/corpus, with ASan and
# UBSan: it passes when nothing crashes, leaks, hangs or runs out of memory.
# `make check` installs clang and builds build/fuzz/fuzz-reader.
. "$(dirname "$0")/lib.sh"

FUZZ=$B/fuzz/fuzz-reader
plan 4
[ -x "$FUZZ" ]
ok $? "the fuzz target is built (make check builds it; clang is a test dependency)" ||
	{ for i in 2 3 4; do skip "no fuzz target"; done; done_testing; }
ls "$ROOT"/tests/fuzz/corpus/*.data >/dev/null 2>&1
ok $? "the seed corpus is there"
# New inputs go to a scratch directory, never into the committed corpus.
mkdir new
"$FUZZ" -max_total_time="${AUTOPROF_FUZZ_TIME:-20}" -timeout=10 -rss_limit_mb=1024 \
	-print_final_stats=1 new "$ROOT/tests/fuzz/corpus" >fuzz.log 2>&1
st=$?
is "$st" 0 "the fuzzer found no crash in ${AUTOPROF_FUZZ_TIME:-20} s" || tail -n 30 fuzz.log | sed 's/^/#   /' >&2
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' fuzz.log)
if [ "$st" = 0 ] && [ "${runs:-0}" -le 1000 ]; then
	# a slow or busy machine (360 inputs in 20 s in a slow VM beside the suite): on until
	# 1000 inputs, for at most a minute more
	"$FUZZ" -runs=$((1001 - ${runs:-0})) -max_total_time=60 -timeout=10 -rss_limit_mb=1024 \
		-print_final_stats=1 new "$ROOT/tests/fuzz/corpus" >fuzz2.log 2>&1
	[ $? = 0 ] || { runs=0 && tail -n 30 fuzz2.log | sed 's/^/#   /'; } # (a crash: said here)
	more=$(sed -n 's/^stat::number_of_executed_units: *//p' fuzz2.log)
	runs=$((${runs:-0} + ${more:-0}))
fi
[ "${runs:-0}" -gt 1000 ]
ok $? "it ran a useful number of inputs without a crash (${runs:-0})"
done_testing
