#!/bin/sh
# cli.t - the command-line conventions of both programs (issue 24): --version,
# one line for a bad flag or a misspelt AUTOPROF_ variable, perf record's
# spellings taken or refused in one line, --help within 80 columns with a
# manual pointer that works from the build tree and after make install.
. "$(dirname "$0")/lib.sh"
needs "$B/autoprof" "$REPORT" "$B/progs/split"
plan 40
A=$B/autoprof

# one_line FILE: FILE holds exactly one line.
one_line() { [ "$(grep -c '' "$1")" -eq 1 ]; }

for prog in "$A" "$REPORT"; do
	name=$(basename "$prog")
	"$prog" --version >out.txt 2>err.txt
	is "$?" 0 "$name --version exits 0"
	one_line out.txt && grep -q "^$name [0-9]" out.txt && clean_stderr err.txt
	ok $? "$name --version prints one line, '$name VERSION'" || diag_file out.txt

	"$prog" --bogus >out.txt 2>err.txt
	is "$?" 2 "$name --bogus exits 2"
	one_line err.txt && grep -q -- "--bogus" err.txt && grep -q -- "--help" err.txt &&
		[ ! -s out.txt ]
	ok $? "$name --bogus: one line naming the flag and pointing to --help" || diag_file err.txt

	"$prog" --help >help.txt 2>&1
	long=$(awk 'length > 80' help.txt | head -3)
	is "$long" "" "$name --help: no line longer than 80 columns"
	man=$(sed -n 's/.*The manual: \(man [^ ]*\)$/\1/p' help.txt)
	page=${man#man }
	[ -n "$page" ] && [ "$page" != "$name" ] && [ -f "$page" ] &&
		env -u MANPATH timeout -s KILL 20 man -P cat "$page" 2>/dev/null | grep -q "^NAME"
	ok $? "$name --help names its manual page in the build tree, and man opens it ($man)"
done
is "$(grep -c -- '--json' help.txt)" 1 "autoprof-report --help lists --json once"

# A bad flag of the launcher, in all its forms: one line, exit 2.
for args in "-x -- true" "-o" "--outpt=x.data -- true" "--st -- true" "--help=1"; do
	# shellcheck disable=SC2086
	"$A" $args >out.txt 2>err.txt
	st=$?
	[ "$st" = 2 ] && one_line err.txt && [ ! -s out.txt ] && [ ! -e x.data ]
	ok $? "autoprof $args: exit 2 and one line ($(head -c 100 err.txt))"
done

# A misspelt variable: one line from the launcher, none from the library in
# the processes and images of the run.
AUTOPROF_FREQUENCY=99 "$A" -o m.data -- sh -c "$B/progs/split 50 >/dev/null; sh -c true" \
	>/dev/null 2>err.txt
is "$?" 0 "the run goes on with a misspelt variable"
is "$(grep -c 'AUTOPROF_FREQUENCY' err.txt)" 1 "under the launcher, it is said once for the run"
grep -q "unknown variable AUTOPROF_FREQUENCY; did you mean AUTOPROF_FREQ?" err.txt
ok $? "the line names the variable and the one meant" || diag_file err.txt
AUTOPROF_FREQUENCY=99 AUTOPROF_OUTPUT=l.data LD_PRELOAD=$LIB \
	sh -c "$B/progs/split 50 >/dev/null; sh -c true; /bin/true" >/dev/null 2>err.txt
is "$(grep -c 'unknown variable AUTOPROF_FREQUENCY; did you mean AUTOPROF_FREQ?' err.txt)" 1 \
	"without the launcher, the library says it once for the run (not in every image)"
AUTOPROF_CALL_GRAPH=fp "$A" -q -o q.data -- true 2>err.txt
clean_stderr err.txt
ok $? "-q: not said" || diag_file err.txt
AUTOPROF_CALL_GRAPH=fp AUTOPROF_OUT=x "$A" -o n.data -- true 2>err.txt
grep -q "AUTOPROF_CALL_GRAPH; did you mean AUTOPROF_CALLGRAPH?" err.txt &&
	grep -q "AUTOPROF_OUT; did you mean AUTOPROF_OUTPUT?" err.txt
ok $? "a flag's spelling (CALL_GRAPH) and a prefix (OUT) find the variable meant" ||
	diag_file err.txt
AUTOPROF_XYZZY=1 "$A" -o n.data -- true 2>err.txt
grep -q "unknown variable AUTOPROF_XYZZY (doc/variables.md" err.txt
ok $? "a name near none is still said" || diag_file err.txt

# perf record's spellings.
"$A" -g dwarf -o d.data -- "$B/progs/split" 200 >/dev/null 2>err.txt
is "$?" 0 "-g dwarf runs"
grep -q "^autoprof: -g dwarf: .*DWARF unwind info.*libunwind" err.txt
ok $? "-g dwarf says what runs (DWARF unwinding by libunwind)" || diag_file err.txt
perf report -i d.data --stdio --header-only 2>/dev/null | grep -q 'sample_type = .*CALLCHAIN' &&
	[ "$(perf_share d.data heavy_two_thirds)" != "" ]
ok $? "-g dwarf's file has call chains perf reads"
"$A" -q --call-graph dwarf,8192 -o d2.data -- true 2>err.txt
is "$?" 0 "--call-graph dwarf,8192 runs (quietly with -q)"
clean_stderr err.txt
ok $? "-q keeps its line out" || diag_file err.txt
"$A" -g lbr -o lbr.data -- true >out.txt 2>err.txt
is "$?" 2 "-g lbr is refused (exit 2)"
one_line err.txt && grep -q "lbr" err.txt && [ ! -e lbr.data ]
ok $? "in one line, and nothing runs" || diag_file err.txt
"$A" -q -g -o g.data "$B/progs/split" 100 >out.txt 2>err.txt
is "$?:$(cat out.txt)" "0:split: done" "perf's bare -g before the command: the command runs"
"$A" -a -o a.data -- true >out.txt 2>err.txt
is "$?" 2 "-a (system-wide) is refused (exit 2)"
one_line err.txt && grep -q -- "-a (perf record's)" err.txt
ok $? "in one line saying what autoprof profiles instead" || diag_file err.txt
"$A" --switch-output=10s -o a.data -- true 2>err.txt
one_line err.txt && grep -q -- "--window" err.txt
ok $? "--switch-output points to --window in one line" || diag_file err.txt
"$A" -q -e cpu-clock -c 1000000 --call-graph fp -o c.data -- "$B/progs/split" 100 >/dev/null 2>err.txt
st=$?
perf report -i c.data --stdio --header-only 2>/dev/null | grep -q 'sample_period = 1000000\|{ sample_period, sample_freq } = 1000000'
is "$st:$?" "0:0" "-e, -c and --call-graph are taken as perf takes them"
"$A" -F max -o f.data -- true 2>err.txt
grep -q "^autoprof: -F max: [0-9]* Hz" err.txt
ok $? "-F max is the kernel's maximum rate, said in one line" || diag_file err.txt

# The manual after make install, with and without the PATH.
make -C "$ROOT" -s install PREFIX="$T/inst" >/dev/null 2>&1
(cd / && "$T/inst/bin/autoprof" --help) >help.txt
grep -q "The manual: man $T/inst/share/man/man1/autoprof.1\$" help.txt
ok $? "installed off the PATH: the pointer names the installed page" || diag "$(tail -1 help.txt)"
PATH="$T/inst/bin:$PATH" autoprof --help >help.txt
grep -q "The manual: man autoprof\$" help.txt &&
	PATH="$T/inst/bin:$PATH" env -u MANPATH timeout -s KILL 20 man -P cat autoprof 2>/dev/null |
	grep -q "^NAME"
ok $? "installed on the PATH: 'man autoprof', and man finds it"
done_testing
