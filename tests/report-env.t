#!/bin/sh
# autoprof-report says one line for a misspelt variable of its own
# (AUTOPROF_REPORT_*, AUTOPROF_NO_KSYM_CACHE), with the nearest name, as the
# library and the launcher do for theirs (common/env_check.c); it leaves the
# library's variables to the library, and runs on.
. "$(dirname "$0")/lib.sh"
needs "$REPORT"
plan 6

env AUTOPROF_REPORT_NO_PREFALT=1 "$REPORT" --version >out.txt 2>err.txt
rc=$?
is "$(cat err.txt)" "autoprof-report: unknown variable AUTOPROF_REPORT_NO_PREFALT; did you mean AUTOPROF_REPORT_NO_PREFAULT?" \
	"a misspelt AUTOPROF_REPORT_ variable: one line with the nearest name"
[ $rc = 0 ] && grep -q . out.txt
ok $? "... and the command runs on"
env AUTOPROF_NO_KSYM_CACH=1 "$REPORT" --version >/dev/null 2>err.txt
is "$(cat err.txt)" "autoprof-report: unknown variable AUTOPROF_NO_KSYM_CACH; did you mean AUTOPROF_NO_KSYM_CACHE?" \
	"the reader's other variable (AUTOPROF_NO_KSYM_CACHE) too"
env AUTOPROF_REPORT_COLOURS=1 "$REPORT" --version >/dev/null 2>err.txt
grep -q '^autoprof-report: unknown variable AUTOPROF_REPORT_COLOURS (doc/variables.md' err.txt &&
	[ "$(wc -l <err.txt)" = 1 ]
ok $? "an AUTOPROF_REPORT_ name near none: one line pointing to the list" || diag_file err.txt
env AUTOPROF_FREQUENCY=99 AUTOPROF_REPORT_NO_PREFAULT=1 AUTOPROF_REPORT_SPEC_GAP=4096 "$REPORT" --version >/dev/null 2>err.txt
is "$(cat err.txt)" "" "known names, and the library's own misspellings (the library says those): nothing"
# The option table reads no uninitialised memory: the short options were once
# built with strchr over the array's garbage, and an 's' there dropped -s now
# and then ("bad option '-s'", under load, on one run in ten).
if command -v valgrind >/dev/null; then
	valgrind -q --error-exitcode=9 "$REPORT" -s comm --version >vg.out 2>vg.err
	ok $? "autoprof-report's option table under valgrind: no uninitialised read" || diag_file vg.err
else
	skip "valgrind is not installed (scripts/install-deps.sh test)"
fi
done_testing
