# memlib.sh - helpers shared by the memory profile tests (sourced after lib.sh):
# bytes, at, and MEMPRELOAD (the LD_PRELOAD of a memory profile).

# bytes FILE EVENT: "SYMBOL PERIOD" for each symbol of EVENT (self), from perf report.
bytes() {
	perf report -i "$1" --stdio --no-children -g none --sort sym -F period,sym 2>>perf.err |
		awk '/^# Samples: .* of event / { on = ($0 ~ "event .'"$2"'.$"); next }
			on && $1 ~ /^[0-9]+$/ { print $NF, $1 }'
}

# at FILE EVENT SYMBOL: SYMBOL's bytes of EVENT, 0 when absent.
at() { bytes "$1" "$2" | awk -v s="$3" '$1 == s { n += $2 } END { print n + 0 }'; }

# The allocator's wrappers, a library of their own: memory profiles preload both.
MEMLIB=$B/libautoprof-memory.so
MEMPRELOAD="$LIB $MEMLIB"
