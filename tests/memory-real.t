#!/bin/sh
# memory-real.t - memory profiles of real programs (issue 25): the programs
# installed here (python3, perl, git, sqlite3, make and cc, ...) run under
# autoprof --memory (and the bare LD_PRELOAD of both libraries) behave as
# without us (output, status), and their files hold plausible numbers that
# perf, autoprof-report and go tool pprof read. A program not installed is
# skipped.
. "$(dirname "$0")/lib.sh"
needs "$B/libautoprof-memory.so" "$B/autoprof"
plan 4
. "$ROOT/tests/memlib.sh" # MEMLIB, MEMPRELOAD, at

A=$B/autoprof
# total FILE: the live bytes --leaks reports in all (empty when none).
total() { "$REPORT" --leaks "$1" 2>/dev/null | sed -n 's/^(live-bytes: \([0-9]*\) bytes.*/\1/p'; }

# ---- a non-PIE executable that takes malloc's and free's addresses ----
# Its dynamic symbols for them are undefined with a value (canonical PLT
# entries, as Debian's python3 has): dlsym(RTLD_DEFAULT) finds those, in the
# executable, whose calls still reach the wrappers through the GOT. The
# library refused such programs ("do not reach the library"), no memory events.
cat >nopie.c <<'EOC'
#include <stdio.h>
#include <stdlib.h>
void *(*volatile get)(size_t);
void (*volatile put)(void *);
__attribute__((noinline)) void *leak_here(size_t n) { return get(n); }
int main(void)
{
	get = malloc; /* an absolute address in code: the canonical PLT entry */
	put = free;
	char *p = leak_here(3u << 20);
	for (size_t i = 0; i < (3u << 20); i += 4096)
		p[i] = 1;
	put(malloc(100));
	printf("%d\n", p[0]);
	return 0;
}
EOC
if cc -O1 -g -no-pie -fno-pie -o nopie nopie.c 2>cc.err &&
	[ "$(readelf --dyn-syms -W nopie | awk '$8 ~ /^malloc@/ && $7 == "UND" && $2 !~ /^0+$/' | wc -l)" = 1 ]; then
	timeout -s KILL 60 env AUTOPROF_MEMORY=1 AUTOPROF_OUTPUT=np.data LD_PRELOAD="$MEMPRELOAD" \
		./nopie >np.out 2>np.err
	is "$(cat np.out) $(at np.data live-bytes leak_here)" "1 3145728" \
		"non-PIE with canonical PLT entries for malloc and free: profiled, its leak found" ||
		diag_file np.err
	! grep -q 'do not reach' np.err
	ok $? "...and no line saying malloc does not reach the library" || diag_file np.err
else
	skip "cc -no-pie did not make a canonical PLT entry for malloc"
	skip "cc -no-pie did not make a canonical PLT entry for malloc"
fi

# ---- python3: Debian's is non-PIE, with those entries ----
PY=/usr/bin/python3
if [ -x "$PY" ]; then
	cat >hold.py <<'EOP'
import os, sys
keep = [bytearray(1000) for _ in range(100000)]   # 100 MB live at the end
sys.stdout.write("%d\n" % sum(len(b) for b in keep)); sys.stdout.flush()
os._exit(3)
EOP
	timeout -s KILL 60 "$PY" hold.py >py0.out 2>py0.err
	echo $? >>py0.out
	timeout -s KILL 60 "$A" -q --memory --memory-interval 65536 -o py.data -- "$PY" hold.py \
		>py.out 2>py.err
	echo $? >>py.out
	cmp -s py0.out py.out && cmp -s py0.err py.err
	ok $? "python3 under --memory: the same output, errors and status" || diag_file py.err
	within "$(total py.data)" 90000000 125000000 \
		"python3 holding 100,000 bytearrays of 1000 bytes at os._exit: about 100 MB live"
else
	skip "no python3"
	skip "no python3"
fi
done_testing
