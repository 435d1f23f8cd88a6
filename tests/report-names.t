#!/bin/sh
# report-names.t - autoprof-report names functions as perf report does: C++
# without parameter lists (--full-names keeps them), Rust legacy names
# without their hash, Rust v0 names demangled, PLT stubs as name@plt, and JIT
# code through /tmp/perf-PID.map, in perf record's files and in ours (whose
# MMAP2 records of anonymous executable mappings make the JIT frames
# nameable by perf report too).
. "$(dirname "$0")/lib.sh"

plan 30

# ours OUT PROG ARGS...: profile PROG with the library into OUT.
ours() {
	_o=$1
	shift
	LD_PRELOAD=$LIB AUTOPROF_OUTPUT=$_o AUTOPROF_QUIET=1 "$@" >"$_o.out" 2>"$_o.err"
}

# theirs OUT PROG ARGS...: perf record (cpu-clock) PROG into OUT.
theirs() {
	_o=$1
	shift
	perf record -q -e cpu-clock -o "$_o" "$@" >"$_o.out" 2>"$_o.err"
}

# top_ours FILE N [OPTS]: the Nth function of autoprof-report's self table.
top_ours() {
	"$REPORT" $3 "$1" 2>/dev/null | awk -v n="$2" '/^Top functions by self/ { t = 1; next }
		t && /^ +Self%/ { next } t && NF == 0 { exit }
		t && ++i == n { sub(/^ *[0-9.]+% +[0-9]+  /, ""); sub(/  +[^ ].*$/, ""); print; exit }'
}

# top_perf FILE N: the Nth symbol of perf report --sort sym.
top_perf() {
	perf report -i "$1" --stdio --no-children --sort sym 2>/dev/null |
		awk -v n="$2" '$1 ~ /%$/ && ++i == n { sub(/^ *[0-9.]+% +\[.\] /, ""); print; exit }'
}

# same_top LABEL FILE: the top two names of autoprof-report and perf report agree
# (--no-inline: perf's self table names the symbol's function, where ours
# would name what is inlined into it, such as Rust's <u64>::wrapping_add).
same_top() {
	is "$(top_ours "$2" 1 --no-inline)|$(top_ours "$2" 2 --no-inline)" "$(top_perf "$2" 1)|$(top_perf "$2" 2)" \
		"$1: the top two names are perf report's"
}

SRC=$ROOT/tests/progs

# C++: templates and overloads, shown without parameters by default.
if g++ -O2 -g -o names "$SRC/names.cpp" 2>cxx.err; then
	theirs cxx.data ./names 40
	ours cxx.ours ./names 40
	same_top "C++, perf record" cxx.data
	same_top "C++, ours" cxx.ours
	is "$(top_ours cxx.data 1)" "shapes::Acc<unsigned int>::add" "C++: no parameter list"
	is "$(top_ours cxx.data 1 --full-names)" "shapes::Acc<unsigned int>::add(unsigned int, int)" \
		"C++: --full-names keeps the parameter list"
	"$REPORT" --help | grep -q -- '--full-names'
	ok $? "--help lists --full-names"
else
	for i in 1 2 3 4 5; do skip "no g++"; done
fi

# C++ with std::map<std::string, int>: libstdc++'s _Rb_tree members have
# 500-character names; shown short (std::string, long template argument
# lists as <...>) in every view, whole with --full-names, the member's own
# name never cut.
if g++ -O2 -g -o cxxmap "$SRC/cxxmap.cpp" 2>cxxmap.err; then
	theirs map.data ./cxxmap 40
	short='std::_Rb_tree<...>::_M_get_insert_unique_pos'
	"$REPORT" -n 40 map.data 2>/dev/null | grep -qF "  $short  "
	ok $? "C++ map: the flat table names $short"
	longest=$("$REPORT" -n 40 map.data 2>/dev/null | awk '/^Top functions by self/ { t = 1 }
		t && $1 ~ /%$/ { sub(/^ *[0-9.]+% +[0-9]+  /, ""); sub(/  +[^ ]+$/, ""); if (length($0) > m) m = length($0) } END { print m + 0 }')
	[ "$longest" -le 80 ]
	ok $? "C++ map: no name in the table is longer than 80 characters ($longest)"
	"$REPORT" -n 40 --full-names map.data 2>/dev/null |
		grep -qF '::_M_get_insert_unique_pos(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&)'
	ok $? "C++ map: --full-names shows the whole name, parameter list included"
	"$REPORT" --folded map.data 2>/dev/null | grep -qE '(^|;)std::_Rb_tree<\.\.\.>::_M_get_insert_unique_pos [0-9]+$'
	ok $? "C++ map: --folded uses the short name"
	"$REPORT" --speedscope sp.json map.data >/dev/null 2>&1 && grep -qF "\"$short\"" sp.json
	ok $? "C++ map: --speedscope uses the short name"
	"$REPORT" --json map.data 2>/dev/null | grep -qF "\"$short\""
	ok $? "C++ map: --json uses the short name"
else
	for i in 1 2 3 4 5 6; do skip "no g++"; done
fi

# Rust: legacy (hash stripped) and v0 mangling.
# (legacy is rustc's default; choosing it explicitly needs -Z unstable-options)
for v in legacy v0; do
	flags=
	[ $v = v0 ] && flags="-C symbol-mangling-version=v0"
	if rustc -O -g $flags -o r$v "$SRC/names.rs" 2>r$v.err; then
		if [ $v = v0 ]; then
			nm r$v | grep -q '_RNv.*5churn'
		else
			nm r$v | grep -q '_ZN.*5churn17h[0-9a-f]*E'
		fi
		ok $? "Rust $v: the binary has $v names"
		theirs r$v.data ./r$v 300
		ours r$v.ours ./r$v 300
		same_top "Rust $v, perf record" r$v.data
		same_top "Rust $v, ours" r$v.ours
		"$REPORT" r$v.ours r$v.data 2>/dev/null | grep -q 'names::calc::churn  '
		ok $? "Rust $v: names::calc::churn, demangled, without hash"
	else
		for i in 1 2 3 4; do skip "rustc cannot build $v"; done
	fi
done

# PLT stubs: name@plt, the name objdump gives the entry. pltcall --stub
# keeps one call in strlen@plt for 300 ms (its GOT slot points at the stub's
# own jump): in a loop of calls through the stub, how many samples land there
# varies with where the timer's interrupts fall (0-45 of 800; none in 8
# recordings on a slow VM under the suite).
# plt_stub FILE: the first PLT stub of pltcall among the 50 top functions.
plt_stub() { "$REPORT" -n 50 "$1" 2>/dev/null | awk '/^Top functions by self/ { t = 1 }
	t && $NF == "pltcall" && $3 ~ /@plt$/ { print "<" $3 ">"; exit }'; }
want=$(objdump -d --section=.plt --section=.plt.sec "$B/progs/pltcall" | grep -o '<strlen@plt>')
perf record -q -F 4000 -e cpu-clock -o plt.data "$B/progs/pltcall" --stub 300 >plt.data.out 2>plt.data.err
AUTOPROF_FREQ=4000 ours plt.ours "$B/progs/pltcall" --stub 300
for f in plt.data plt.ours; do
	is "$(plt_stub $f)" "$want" "PLT: $f names the stub strlen@plt"
done

# JIT: an anonymous executable page mapped after start, named by /tmp/perf-PID.map.
theirs jit.data "$B/progs/jitmap" 200
ours jit.ours "$B/progs/jitmap" 200
for f in jit.data jit.ours; do
	is "$(top_ours $f 1)" "jit_hot_loop" "JIT: autoprof-report names the JIT frames in $f"
	is "$(top_perf $f 1)" "jit_hot_loop" "JIT: perf report names the JIT frames in $f"
done

# node --perf-basic-prof, profiled by us: JS frames named as perf record's file names them.
if command -v node >/dev/null 2>&1; then
	echo 'function fibJs(n) { return n < 2 ? n : fibJs(n - 1) + fibJs(n - 2); }
let s = 0; for (let i = 0; i < 60; i++) s += fibJs(27); console.log(process.pid);' >fib.js
	ours node.ours node --perf-basic-prof fib.js
	top=$(top_ours node.ours 1)
	# The prefix is node's: JS:* (node 20), LazyCompile:* (Debian's node 18).
	case "$top" in *:\*fibJs" $T/fib.js:"*) r=0 ;; *) r=1 ;; esac
	ok $r "node: autoprof-report names the JIT frames in our file ($top)"
	is "$(top_perf node.ours 1)" "$top" "node: perf report names them the same"
	# node --perf-prof writes a jitdump; perf inject --jit turns our file into
	# one with an ELF object per JIT function.
	ours dump.ours node --perf-prof fib.js
	perf inject --jit -i dump.ours -o dump.inj 2>inject.err
	ok $? "node: perf inject --jit takes our file (its marker mmap, CLOCK_MONOTONIC attrs)"
	is "$("$REPORT" dump.inj 2>/dev/null | grep -c ':\*fibJs .* jitted-[0-9]*-[0-9]*\.so')" 2 \
		"node: autoprof-report names the injected JIT objects"
else
	for i in 1 2 3 4; do skip "no node"; done
fi
# Aliases that tie in perf's choose_best_symbol() (libc's pthread_create under two
# versions, same binding, same length): perf keeps the one its table lists first, as
# we do; we used to take the other (pthread_create@@GLIBC_2.34, 0.65% of a window's
# profile that perf named nowhere: report-windows.t 4).
# (the main thread's user time in pthread_create is a few samples a second of its CPU:
# recorded again, up to 3 times, until it has one)
for i in 1 2 3; do
	ours spawn.ours "$B/progs/spawnloop" 200
	mine=$("$REPORT" spawn.ours 2>/dev/null | grep -o 'pthread_create@[^ ]*GLIBC[^ ]*' |
		sort -u | tr '\n' ' ')
	[ -n "$mine" ] && break
done
theirs=$(perf report -i spawn.ours --stdio --no-children --sort sym 2>/dev/null |
	grep -o 'pthread_create@[^ ]*GLIBC[^ ]*' | sort -u | tr '\n' ' ')
[ -n "$mine" ] && [ "$mine" = "$theirs" ]
ok $? "aliases that tie: pthread_create named as perf names it (ours: ${mine:-none}; perf: ${theirs:-none})"
# The perf maps the programs wrote (each printed its pid).
for f in jit.data.out jit.ours.out node.ours.out; do
	[ -s "$f" ] && rm -f "/tmp/perf-$(tail -n 1 "$f").map"
done
done_testing
