#!/bin/sh
# report-kernel.t - kernel samples (AUTOPROF_KERNEL=1) get the function names
# perf report gives them, through /proc/kallsyms and the file's kernel map,
# with self shares within 0.5 points of perf's.
. "$(dirname "$0")/lib.sh"

if ! command -v perf >/dev/null 2>&1 || [ ! -x "$B/progs/syscalls" ]; then
	echo "1..0 # SKIP perf or build/progs/syscalls is missing"
	exit 0
fi
LD_PRELOAD=$LIB AUTOPROF_QUIET=1 AUTOPROF_KERNEL=1 "$B/progs/syscalls" >/dev/null 2>&1
perf report -i perf.data --stdio --no-children --sort sym 2>/dev/null |
	awk '$1 ~ /%$/ && $2 == "[k]" { sub(/%/, "", $1); print $3, $1 }' | sort >perf-k.txt
if [ ! -s perf-k.txt ]; then
	echo "1..0 # SKIP no kernel samples here (perf_event_paranoid or no kernel map)"
	exit 0
fi
if ! awk '$1 != "0000000000000000" { found = 1 } END { exit !found }' /proc/kallsyms 2>/dev/null; then
	echo "1..0 # SKIP /proc/kallsyms shows no addresses to this user"
	exit 0
fi
plan 7

"$REPORT" --no-children --top 40 perf.data >ours.txt 2>ours.err
ok $? "the report reads a file with kernel samples"
awk '/by self time/ { t = 1; next } t && $NF == "[kernel.kallsyms]" { sub(/%/, "", $1); print $3, $1 }' ours.txt | sort >ours-k.txt
n=$(join ours-k.txt perf-k.txt | wc -l)
[ "$n" -ge 2 ] && [ "$n" -ge $(($(wc -l <perf-k.txt) * 8 / 10)) ]
ok $? "kernel functions have perf's names ($n of $(wc -l <perf-k.txt) shared)" || { diag_file ours-k.txt; diag_file perf-k.txt; }
bad=$(join ours-k.txt perf-k.txt | awk '{ d = $2 - $3; if (d > 0.5 || d < -0.5) print $1 }')
is "$bad" "" "their self shares agree with perf report within 0.5 points"
"$REPORT" --tree --top 3 perf.data | grep -q 'entry_SYSCALL_64\|do_syscall_64'
ok $? "kernel frames appear in the call tree below the user frames"

# the kallsyms cache ($XDG_CACHE_HOME/autoprof/kallsyms) is read only from a
# folder of this user's that no one else may write, only when it is a file of
# this user's, never through a symbolic link. A forged cache: a good one with
# the top kernel function's name made Z's.
XDG_CACHE_HOME=$T/kc "$REPORT" --no-children --top 40 perf.data >/dev/null 2>&1
top=$(sort -k2 -nr ours-k.txt | awk '{ print $1; exit }')
zz=$(echo "$top" | sed 's/./Z/g')
perl -0777 -pe 's/\0\Q'"$top"'\E\0/"\0" . ("Z" x length("'"$top"'")) . "\0"/e' kc/autoprof/kallsyms >forged
# kforged DIR: the report with cache folder DIR shows none of the forged names
kforged() { ! XDG_CACHE_HOME=$1 "$REPORT" --no-children --top 40 perf.data 2>&1 | grep -q "$zz"; }
if [ ! -s kc/autoprof/kallsyms ] || cmp -s forged kc/autoprof/kallsyms; then
	skip "no kallsyms cache to forge"
	skip "no kallsyms cache to forge"
	skip "no kallsyms cache to forge"
else
	mkdir -p ww/autoprof
	chmod 777 ww/autoprof
	cp forged ww/autoprof/kallsyms
	kforged "$T/ww" && cmp -s forged ww/autoprof/kallsyms
	ok $? "a cache folder others may write (mode 777): its forged kallsyms not read, not written"
	mkdir -p sl/autoprof
	ln -s "$T/forged" sl/autoprof/kallsyms
	kforged "$T/sl" && [ -f sl/autoprof/kallsyms ] && [ ! -L sl/autoprof/kallsyms ]
	ok $? "a kallsyms cache named by a symbolic link is not read: one of our own is written in its place"
	if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
		mkdir -p no/autoprof
		cp forged no/autoprof/kallsyms
		chown nobody no/autoprof/kallsyms
		kforged "$T/no" && [ "$(stat -c %u no/autoprof/kallsyms)" = 0 ]
		ok $? "a kallsyms cache owned by another user is not read: one of our own is written in its place"
	else
		skip "not root: no file of another user to make"
	fi
fi
done_testing
