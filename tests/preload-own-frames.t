#!/bin/sh
# The profiler never shows in the profile: at -F 20000 (with and without
# AUTOPROF_OFFCPU=1) a program's profile has no frame in libautoprof.so or
# libunwind, in perf report --sort dso,sym and in autoprof-report, while
# the program's functions keep their shares: offcpu70's work_here keeps its
# share of the CPU samples of a 1 kHz run (within 5 points); and a sample
# taken in the handler, after its last look at the ring, keeps the program's
# whole stack below it.
. "$(dirname "$0")/lib.sh"
P=$B/progs
needs "$P/offcpu70" "$P/split"
plan 8
export AUTOPROF_QUIET=1

# share FILE SYM: SYM's self share (%) in FILE's samples.
share() {
	perf report -i "$1" --stdio --no-children --sort sym 2>/dev/null |
		awk -v s="$2" '$NF == s && $1 ~ /%$/ { sub("%", "", $1); print $1; exit }'
}

timeout -s KILL 60 env LD_PRELOAD="$LIB" AUTOPROF_OUTPUT=ref.data "$P/offcpu70" nanosleep 100 \
	>/dev/null 2>&1
ref=$(share ref.data work_here)
for off in 0 1; do
	(
		ulimit -t 20
		exec timeout -s KILL 60 env LD_PRELOAD="$LIB" AUTOPROF_FREQ=20000 \
			AUTOPROF_OFFCPU=$off AUTOPROF_OUTPUT=f$off.data "$P/offcpu70" nanosleep 100
	) >prog$off.out 2>&1
	st=$?
	perf report -i f$off.data --stdio --no-children --sort dso,sym >rep$off.txt 2>rep$off.err
	clean_stderr rep$off.err
	ok $? "OFFCPU=$off, -F 20000: perf report --sort dso,sym reads the file, nothing on stderr" ||
		{ diag "the run's status $st, its files: $(ls f$off.data* 2>&1 | tr '\n' ' ')" &&
			diag_file rep$off.err && diag_file prog$off.out; }
	! grep -E 'libautoprof|libunwind' rep$off.txt >own$off.txt
	ok $? "OFFCPU=$off: no frame in libautoprof.so or libunwind (perf report)" ||
		diag_file own$off.txt
	"$REPORT" f$off.data >ar$off.txt 2>ar$off.err
	! grep -E 'libautoprof|libunwind|unw_backtrace|offcpu__|on_signal__' ar$off.txt >aown$off.txt
	ok $? "OFFCPU=$off: no frame of the profiler in autoprof-report's view" ||
		diag_file aown$off.txt
done
got=$(share f0.data work_here)
within "$got" "$(echo "$ref" | awk '{ print $1 - 5 }')" "$(echo "$ref" | awk '{ print $1 + 5 }')" \
	"work_here keeps its share at 20 kHz (1 kHz: $ref%)"

# split's samples in heavy_two_thirds and light_one_third, all of them under
# work_loop and main: at 20 kHz a few in 10,000 are taken in the handler after
# it last looked at the ring, and lost every frame below the interrupted
# function while the handler kept the program's stack only for a ring not empty.
all=0 short=0
for i in 1 2 3; do
	timeout -s KILL 60 env LD_PRELOAD="$LIB" AUTOPROF_FREQ=20000 AUTOPROF_OUTPUT=s$i.data \
		"$P/split" 400 >/dev/null 2>&1
	set -- $(perf script -i s$i.data -F ip,sym 2>/dev/null | awk 'BEGIN { RS = "" }
		/heavy_two_thirds|light_one_third/ { n++; if (!/work_loop/ || !/ main\n/) s++ }
		END { print n + 0, s + 0 }')
	all=$((all + $1)) short=$((short + $2))
done
[ "$all" -gt 3000 ] && [ "$short" = 0 ]
ok $? "-F 20000: every one of split's $all samples in its two functions has work_loop and main ($short without)"
done_testing
