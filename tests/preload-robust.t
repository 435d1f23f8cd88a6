#!/bin/sh
# The library never changes what the program does, and refuses bad options
# in one clear line.
. "$(dirname "$0")/lib.sh"
plan 12

AUTOPROF_FREQ=abc LD_PRELOAD=$LIB "$B/progs/split" 50 >out.txt 2>err.txt
rc=$?
is "$rc" 0 "a bad AUTOPROF_FREQ does not change the exit status"
is "$(cat out.txt)" "split: done" "nor the output"
is "$(wc -l <err.txt)" 1 "one line on stderr"
grep -q "AUTOPROF_FREQ='abc'" err.txt
ok $? "naming the variable and the value" || diag_file err.txt
[ ! -e perf.data ]
ok $? "and no file is written"

AUTOPROF_STACK_DEPTH=-3 LD_PRELOAD=$LIB /bin/true 2>err.txt
grep -q "AUTOPROF_STACK_DEPTH='-3'" err.txt
ok $? "a negative stack depth is refused by name"
AUTOPROF_EVENT=nonsense LD_PRELOAD=$LIB /bin/true 2>err.txt
grep -q "AUTOPROF_EVENT='nonsense'" err.txt
ok $? "an unknown event is refused by name"

AUTOPROF_QUIET=1 LD_PRELOAD=$LIB sh -c 'echo hi; exit 5' >out.txt 2>err.txt
is "$?" 5 "exit status of sh -c 'exit 5' is kept"
is "$(cat out.txt)" "hi" "its output is kept"

echo old >perf.data
AUTOPROF_QUIET=1 LD_PRELOAD=$LIB "$B/progs/split" 50 >/dev/null
is "$(cat perf.data.old)" "old" "an existing perf.data is moved to perf.data.old"

mkdir sub
AUTOPROF_QUIET=1 AUTOPROF_OUTPUT=sub/prof.%p LD_PRELOAD=$LIB sh -c 'echo $$ >pid'
[ -f "sub/prof.$(cat pid)" ]
ok $? "%p in AUTOPROF_OUTPUT becomes the pid"

AUTOPROF_OUTPUT=/nonexistent/dir/x.data LD_PRELOAD=$LIB sh -c 'exit 3' 2>err.txt
rc=$?
is "$rc:$(grep -c 'cannot create /nonexistent/dir/x.data' err.txt)" "3:1" \
	"an unwritable output path: one line, program unaffected"
done_testing
