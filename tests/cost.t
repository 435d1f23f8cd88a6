#!/bin/sh
# Batched sampling (issue 15): one signal per AUTOPROF_BATCH samples, each
# sample's stack unwound from the copy the kernel took with it (cfi.c). Its
# stacks must be those of the unbatched path (a signal per sample, unwound
# live by libunwind) and of perf record --call-graph dwarf, complete
# (reaching main) on a program built without frame pointers, at the rate
# asked for, and with fewer signals than samples.
. "$(dirname "$0")/lib.sh"
PROG=$B/progs/costloop
needs "$PROG"
plan 28

# folded FILE: each sample as "sym;sym;...", innermost first, up to main,
# with runs of descend folded to descend*N; perf script's view.
folded() {
	perf_script "$1" -F ip,sym |
		awk 'BEGIN { RS = "" } {
			s = ""; prev = ""; run = 0
			for (i = 1; i <= NF; i += 2) {
				f = $(i + 1)
				if (f == prev && f == "descend") { run++; continue }
				if (prev == "descend") s = s "*" run
				s = s (s == "" ? "" : ";") f; prev = f; run = 1
				if (f == "main") break
			}
			if (prev == "descend") s = s "*" run
			print s
		}'
}

# share_main FILE [END]: percent of costloop's samples (in spin or descend)
# whose stack reaches main (or END: a thread's outermost frame).
share_main() {
	folded "$1" | awk -v e="${2:-main}" '/^(spin|descend)/ { n++; if ($0 ~ (";" e "$")) m++ }
		END { printf "%.1f\n", n ? 100 * m / n : 0 }'
}

# top FILE: the most common folded stack and its percent of costloop's samples.
top() {
	folded "$1" | awk '/^(spin|descend)/' | sort | uniq -c | sort -rn |
		awk 'NR == 1 { t = $2; c = $1 } { n += $1 } END { printf "%s %.1f\n", t, n ? 100 * c / n : 0 }'
}

# cputime OUT CMD...: run CMD (stdout to OUT), print its CPU seconds.
cputime() {
	python3 -c 'import os, sys
out = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
pid = os.fork()
if pid == 0:
    os.dup2(out, 1)
    os.execvp(sys.argv[2], sys.argv[2:])
_, st, ru = os.wait4(pid, 0)
print("%.4f" % (ru.ru_utime + ru.ru_stime))' "$@"
}

# run NAME DEPTH THREADS BATCH: costloop under the library at 4 kHz; its
# CPU seconds in NAME.cpu.
run() {
	cputime "$1.out" timeout 60 env COSTLOOP_CPU=1 AUTOPROF_COST=1 AUTOPROF_FREQ=4000 AUTOPROF_COUNTERS=none \
		AUTOPROF_BATCH="$4" AUTOPROF_OUTPUT="$1.data" LD_PRELOAD="$LIB" \
		"$PROG" 0.6 "$2" "$3" 2>"$1.err" >"$1.cpu"
}

# bare NAME DEPTH: the floor, the kernel's bare event (cpu-clock, user only, at
# the period asked for) recorded by perf, in the same conditions.
bare() {
	env COSTLOOP_CPU=1 perf record -q -o "$1.data" -e cpu-clock:u -c 250000 \
		timeout 60 "$PROG" 0.6 "$2" 1 2>"$1.err" >/dev/null
}

for depth in 1 60; do
	[ "$depth" = 60 ] && bare f60 60
	run b$depth $depth 1 16
	run u$depth $depth 1 1
	"$PROG" 0.6 "$depth" 1 >plain.out
	cmp -s plain.out "b$depth.out"
	ok $? "depth $depth: batched, the program's output is unchanged"
	within "$(share_main b$depth.data)" 99 100 "depth $depth: batched stacks reach main"
	within "$(share_main u$depth.data)" 99 100 "depth $depth: unbatched stacks reach main"
	read -r bt bs <<EOF
$(top b$depth.data)
EOF
	read -r ut us <<EOF
$(top u$depth.data)
EOF
	is "$bt" "$ut" "depth $depth: the same stack as the unbatched path"
	within "$bs" 95 100 "depth $depth: ... for most samples ($bt)"
	case $bt in
	spin\;descend\*$((depth + 1))\;worker\;main*) r=0 ;;
	*) r=1 ;;
	esac
	ok $r "depth $depth: spin under $((depth + 1)) descend frames, worker, main"
done

# Fewer signals than samples: AUTOPROF_COST counts the handler's runs.
runs() { sed -n 's/.*cost: \([0-9]*\) samples in \([0-9]*\) handler runs.*/\1 \2/p' "$1"; }
read -r bn bh <<EOF
$(runs b60.err)
EOF
read -r un uh <<EOF
$(runs u60.err)
EOF
within "$((bh * 8))" 0 "${bn:-0}" "batched: one handler run per 8 samples or more ($bh for $bn)"
# A run whose sample had only the profiler's frames leaves it out (own_only),
# so runs may pass the samples by a few (1825 for 1824 seen): 1% and 2 more.
within "$((uh * 100))" $((un * 90)) $((un * 101 + 200)) "unbatched: a handler run per sample ($uh for $un)"
# The rate asked for is delivered, as unbatched: samples in the work (spin)
# per CPU-second the work took by the program's own clock (start-up and the
# file's end, where nothing samples, are the same constant for both and
# would weigh on a 0.45 s run: 30-80 samples, varying with the machine's load).
rate() {
	folded "$1.data" | awk -v c="$(sed -n 's/^work-cpu //p' "$1.err")" \
		'/^spin/ { n++ } END { printf "%.0f %s\n", c ? n / c : 0, n }'
}
read -r br bs <<EOF
$(rate b60)
EOF
read -r ur us <<EOF
$(rate u60)
EOF
read -r fr fs <<EOF
$(perf_script f60.data -F ip,sym | awk -v c="$(sed -n 's/^work-cpu //p' f60.err)" \
	'$2 == "spin" { n++ } END { printf "%.0f %s\n", c ? n / c : 0, n }')
EOF
# 95% of what the kernel's bare event delivers in the same conditions: on a
# quiet machine it delivers the 4000 asked for (3994-4000 batched here); on
# a loaded one the floor itself drops (3951-3982 under 4 CPU burners) and
# batched samples a little less again (3841-3958: samples that fall in the
# kernel's part of a drain, a user-only sample lost; 95.96% of the floor
# once in CI's parallel suite, 97.5-99.7% beside 2 burners here).
within "$br" $((fr * 95 / 100)) 4200 \
	"batched: 95% of the samples per CPU-second the bare event delivers ($bs in the work, floor $fr from $fs)"
# (no upper bound here: the batched rate is bound by the rate asked for above, and a
# signal per sample loses more of it on a loaded machine: 3352 against 3996 in CI)
# Against the unbatched rate the same loss shows: 3-4% of the batched samples
# fall in the kernel's part of a drain under load and a user-only event drops
# them (3832 against 3959 unbatched in a CI run: 96.8%; under 4 CPU burners
# here batched gave 3841-3958 and unbatched 3946-3994, 96.2% at worst): 95%.
within "$(awk -v a="$br" -v b="$ur" 'BEGIN { print b ? 100 * a / b : 0 }')" 95 1000 \
	"batched: the rate delivered is the unbatched one's, 95% or more ($br, $ur)"

# Threads: each has its own tick and ring.
run t4 1 4 16
within "$(share_main t4.data clone3)" 99 100 "4 threads, batched: stacks reach clone3"
n=$(perf_script t4.data -F tid | sort -u | wc -l)
within "$n" 4 5 "4 threads, batched: samples of every thread"

# perf's own DWARF unwinder, on the same program: the same stack.
if perf record -q --no-bpf-event -e cpu-clock:u -F 2000 --call-graph dwarf -o perf.data \
	timeout 60 "$PROG" 0.4 60 1 >/dev/null 2>perf.err; then
	read -r pt ps <<EOF
$(top perf.data)
EOF
	is "$pt" "$(top b60.data | cut -d' ' -f1)" "depth 60: perf --call-graph dwarf finds the same stack"
else
	skip "perf record --call-graph dwarf failed: $(head -1 perf.err)"
fi

# A program nobody here wrote: python3's stacks are complete (reach _start) batched (its
# interpreter's frames are deep: the copies grow), as they do unbatched.
pymain() {
	perf_script "$(ls -S "$1"* | head -1)" -F ip,sym,dso | awk 'BEGIN { RS = "" } !/libautoprof/ {
			n++; for (i = 1; i <= NF; i++) if ($i == "_start") { m++; break } }
		END { printf "%.1f\n", n ? 100 * m / n : 0 }'
}
for b in 16 1; do
	timeout 60 env AUTOPROF_FREQ=4000 AUTOPROF_COUNTERS=none AUTOPROF_BATCH=$b \
		AUTOPROF_OUTPUT=py$b.data LD_PRELOAD="$LIB" /usr/bin/python3 -c 'print(sum(i * i for i in range(8000000)))' \
		>py$b.out 2>py$b.err
done
cmp -s py16.out py1.out
ok $? "python3: the same output batched and not"
within "$(pymain py16.data)" 99 100 "python3, batched: stacks reach _start"
within "$(pymain py1.data)" 99 100 "python3, unbatched: stacks reach _start"

# Issue 26: fewer signals at high rates (the batch grows with the rate as far
# as the same ring holds 16 batches), and copies sized to what the walks read
# (shrunk after 2048 walks that need less; restored, then grown, when the
# stacks deepen). AUTOPROF_COST says samples per signal, stack bytes copied
# per sample and a thread's copy at its end.
costs() {
	sed -n 's/.* \([0-9.]*\) samples per signal; \([0-9]*\) bytes of stack copied per sample, \([0-9]*\) a thread.s copy at its end.*/\1 \2 \3/p' "$1"
}
# at NAME HZ ARGS...: costloop ARGS under the library at HZ, defaults otherwise.
at() {
	n=$1 hz=$2
	shift 2
	timeout 60 env AUTOPROF_COST=1 AUTOPROF_FREQ="$hz" AUTOPROF_COUNTERS=none \
		AUTOPROF_OUTPUT="$n.data" LD_PRELOAD="$LIB" "$PROG" "$@" >"$n.out" 2>"$n.err"
}
# The copies' sizes follow the walks of a run, which a loaded machine (make
# check's parallel tests) can starve of samples or delay: a size out of
# bounds is measured once more, and the second run decides (the first run's
# figure is in the check's name).
at s10 10000 1.5 1 1
read -r sps cpb end <<EOF
$(costs s10.err)
EOF
if [ "${end:-0}" -lt 512 ] || [ "${end:-0}" -gt 1536 ]; then
	first=${end:-none}
	at s10 10000 1.5 1 1
	read -r sps cpb end <<EOF
$(costs s10.err)
EOF
	cpb="$cpb; first run ${first} at the end"
fi
within "${end:-0}" 512 1536 \
	"10 kHz, shallow stacks: copies of what the walks read (${end:-none} bytes at the end, ${cpb:-?} per sample)"
within "$(share_main s10.data)" 99 100 "10 kHz, smaller copies: stacks reach main"
at s1 1000 0.6 1 1
read -r sps1 _ <<EOF
$(costs s1.err)
EOF
within "$(awk -v x="${sps1:-99}" 'BEGIN { printf "%d", 10 * x }')" 10 85 \
	"1 kHz: 8 samples per signal at most (${sps1:-none}): drains 8 ms apart at most"
# the batch grows with the rate: against 1 kHz's on the same machine (a fixed 12 was
# missed in a slow VM under the suite, 11.5 against 1 kHz's 7: drains come early
# there), and at most 60
within "$(awk -v x="${sps:-0}" -v y="${sps1:-0}" 'BEGIN { printf "%d", ((y > 0 && x <= 60) ? 100 * x / y : 0) }')" 130 10000 \
	"10 kHz: 1.3 times 1 kHz's samples per signal or more (${sps:-none} against ${sps1:-none})"
at d10 10000 3 1 1 100
read -r _ _ dend <<EOF
$(costs d10.err)
EOF
dfirst=
if [ "${dend:-0}" -lt 4096 ]; then # once more, as for s10 above
	dfirst="; first run ${dend:-none}"
	at d10 10000 3 1 1 100
	read -r _ _ dend <<EOF
$(costs d10.err)
EOF
fi
within "${dend:-0}" 4096 60000 "10 kHz, stacks deepening midway: the copies grew back (${dend:-none} bytes at the end$dfirst)"
within "$(share_main d10.data)" 99 100 "10 kHz, stacks deepening midway: stacks reach main"
done_testing
