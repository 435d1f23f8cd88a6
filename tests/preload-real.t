#!/bin/sh
# Programs nobody here wrote: python3, xz, sort. Their output and exit status
# are unchanged, and perf reads what we wrote with their real symbols.
. "$(dirname "$0")/lib.sh"
plan 12

# run NAME CMD...: the command plain, then under the library; compare.
run() {
	name=$1
	shift
	"$@" >"$name.plain" 2>/dev/null
	prc=$?
	AUTOPROF_QUIET=1 AUTOPROF_OUTPUT=$name.data LD_PRELOAD=$LIB "$@" >"$name.prof" 2>"$name.err"
	rc=$?
	cmp -s "$name.plain" "$name.prof" && [ "$rc" = "$prc" ] && clean_stderr "$name.err"
	ok $? "$name: same output and exit status ($rc), silent"
	perf report -i "$name.data" --stdio --no-children --sort dso,sym >"$name.rep" 2>"$name.rerr"
	clean_stderr "$name.rerr" && [ -s "$name.rep" ]
	ok $? "$name: perf report reads the file without a warning" || diag_file "$name.rerr"
}

run python3 /usr/bin/python3 -c 'print(sum(i * i for i in range(2000000)))'
grep -q '_PyEval_EvalFrameDefault\|PyObject_\|long_' python3.rep
ok $? "python3: samples land in the interpreter's own functions"

head -c 600000 /dev/urandom | od -An -tx1 >input.txt
run xz xz -6 -T1 -c input.txt
grep -q 'liblzma' xz.rep
ok $? "xz: samples land in liblzma"

run sort sort input.txt
grep -q 'libc.so\|sort' sort.rep
ok $? "sort: samples land in sort and libc"

AUTOPROF_QUIET=1 AUTOPROF_OUTPUT=sh.data LD_PRELOAD=$LIB sh -c 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; echo $i' >sh.out
is "$(cat sh.out)" 20000 "sh: a shell loop runs to the end"
perf script -i sh.data >/dev/null 2>sh.err
clean_stderr sh.err
ok $? "sh: perf script reads the file" || diag_file sh.err
n=$(nsamples python3.data)
within "$n" 20 100000 "python3: samples were taken"
done_testing
