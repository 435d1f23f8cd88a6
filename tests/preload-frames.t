#!/bin/sh
# preload-frames.t - stacks are walked through the frames that are not plain
# calls: a signal frame (the program's own handler running on its stack),
# a PLT stub; and the profiler's own handler, whose samples are charged to
# the program code it interrupted (its frames never show).
. "$(dirname "$0")/lib.sh"
plan 7
P=$B/progs
export AUTOPROF_QUIET=1

# reach FILE WHERE NAMES: "n m", the samples of FILE with a frame whose
# symbol is one of NAMES (an awk regex over whole names) in their leaf frame
# (WHERE leaf) or in any frame (any), and how many of those reach main or
# start_thread.
reach() {
	perf_script "$1" -F ip,sym >"$1.txt"
	awk -v where="$2" -v names="^($3)$" 'BEGIN { RS = "" }
		{
			k = split($0, line, "\n"); hit = deep = 0
			for (i = 1; i <= k; i++) {
				nf = split(line[i], f, " ")
				if (nf < 2)
					continue
				if ((where == "any" || i == 1) && f[2] ~ names)
					hit = 1
				if (f[2] == "main" || f[2] == "start_thread")
					deep = 1
			}
			n += hit; m += hit && deep
		}
		END { print n + 0, m + 0 }' "$1.txt"
}

# 1-3: samples in the program's SIGALRM handler (its work, then the signal
# frame, then the interrupted code) reach main as often as perf record
# --call-graph dwarf's do (it copies the stack the same way).
# (verbose: a failure shows how many samples the library found without a full stack)
LD_PRELOAD=$LIB AUTOPROF_OUTPUT=sig.data AUTOPROF_QUIET=0 AUTOPROF_VERBOSE=1 "$P/sighot" 1 \
	>sig.out 2>sig.err
is "$?:$(cat sig.out)" "0:sighot: done" "sighot: same output and end profiled"
set -- $(reach sig.data any handler_work)
ours_n=$1 ours_m=$2
diag "ours: $ours_m of $ours_n handler samples reach main"
perf record -q --call-graph dwarf -o perf-sig.data "$P/sighot" 1 >/dev/null 2>perf-sig.err
set -- $(reach perf-sig.data any handler_work)
diag "perf record --call-graph dwarf: $2 of $1"
ok $([ "$ours_n" -ge 50 ] && [ $((100 * ours_m)) -ge $((95 * ours_n)) ] && echo 0 || echo 1) \
	"95% of the samples in a signal handler reach main (through the signal frame)" ||
	{ echo "preload-frames.t: ours $ours_m of $ours_n handler samples reach main, perf's $2 of $1" >&2 &&
		diag_file sig.err && awk 'BEGIN { RS = "" } /handler_work/ && !/ main\n/ && n++ < 3 { print }' \
		sig.data.txt | sed 's/^/#   /' >&2; }
ok $([ "$1" -gt 0 ] && [ $((100 * ours_m * $1)) -ge $(((100 * $2 - 3 * $1) * ours_n)) ] &&
	echo 0 || echo 1) "no more than 3 points below perf record --call-graph dwarf"

# 4-5: samples in a PLT stub walk on to main. pltcall --stub keeps one call
# to strlen in strlen@plt for 300 ms (its GOT slot points at the stub's own
# jump until a thread puts it back): in a loop of calls through the stub, the
# stub's share varies with where the timer's interrupts fall (0 stub samples
# in 12 recordings in a CI preview, 1 in 6 here).
LD_PRELOAD=$LIB AUTOPROF_FREQ=4000 AUTOPROF_OUTPUT=plt.data "$P/pltcall" --stub 300 >/dev/null
set -- $(reach plt.data leaf '_init|[a-z_]+@plt')
plt_n=$1 plt_m=$2
diag "$plt_m of $plt_n samples in PLT stubs reach main"
ok $([ "$plt_n" -ge 100 ] && echo 0 || echo 1) "pltcall --stub: samples in its PLT stub (1200 at 4 kHz on a quiet machine, 100 or more asked)"
is "$plt_m" "$plt_n" "every sample in a PLT stub reaches main"

# 6-7: the profiler never shows in the profile: the samples taken in its own
# handler (draining, unwinding, writing) are charged to the code it
# interrupted, so at 10 kHz no sample has a frame in libautoprof.so or
# libunwind, and the program's stacks still reach start_thread or main.
LD_PRELOAD=$LIB AUTOPROF_FREQ=10000 AUTOPROF_OUTPUT=own.data "$P/threads" 600 >/dev/null
perf_script own.data -F ip,sym,dso >own.txt
set -- $(awk 'BEGIN { RS = "" } { n++; if ($0 ~ /libautoprof\.so|libunwind/) own++;
	if ($0 ~ / (main|start_thread) /) deep++ } END { print n + 0, own + 0, deep + 0 }' own.txt)
diag "$1 samples, $2 with a frame of the profiler, $3 reaching main or start_thread"
ok $([ "$1" -ge 100 ] && [ $((2000 * $2)) -le "$1" ] && echo 0 || echo 1) \
	"threads at 10 kHz: no sample (at most 1 in 2000) has a frame in libautoprof.so or libunwind"
ok $([ $((100 * $3)) -ge $((95 * $1)) ] && echo 0 || echo 1) \
	"95% of them reach main or start_thread (the program's stacks)"
done_testing
