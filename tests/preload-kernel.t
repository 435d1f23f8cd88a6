#!/bin/sh
# AUTOPROF_KERNEL=1: kernel samples with kernel call chains, joined to the
# user stack that made the system call; refused cleanly where not permitted.
. "$(dirname "$0")/lib.sh"
plan 7

paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
if [ "$(id -u)" -ne 0 ] && [ "$paranoid" -ge 2 ]; then
	AUTOPROF_KERNEL=1 LD_PRELOAD=$LIB "$B/progs/syscalls" 2>err.txt
	is "$?" 0 "without permission the program still runs"
	grep -q 'kernel samples are not permitted here' err.txt
	ok $? "and one line says kernel samples are not permitted"
	for i in 3 4 5 6 7; do skip "kernel sampling needs root or perf_event_paranoid <= 1"; done
	done_testing
fi

AUTOPROF_QUIET=1 AUTOPROF_KERNEL=1 LD_PRELOAD=$LIB "$B/progs/syscalls"
is "$?" 0 "the system-call-heavy program exits 0"
perf report -i perf.data --stdio --no-children --sort dso >rep.txt 2>rep.err
clean_stderr rep.err
ok $? "perf report reads the file without a warning" || diag_file rep.err
k=$(awk '$1 ~ /%$/ && $2 == "[kernel.kallsyms]" { sub(/%/, "", $1); print $1 }' rep.txt)
within "$k" 20 100 "a good part of the samples are in the kernel"
perf_script perf.data >script.txt
awk 'BEGIN { RS = "" } /\[kernel\.kallsyms\]/ { k++; if ($0 ~ /do_writes/ && $0 ~ /entry_SYSCALL/) j++ } END { exit !(k > 0 && j >= 0.95 * k) }' script.txt
ok $? "95% of kernel samples carry the kernel chain and the user stack up to do_writes"
grep -q 'ksys_write\|vfs_write\|do_syscall_64' script.txt
ok $? "kernel frames resolve to kernel symbols"
"$PERFPARSER" --input perf.data --print-stats >parser.txt 2>&1
is "$(awk '/^samples time violations:/ { print $4 }' parser.txt)" 0 "hotspot-perfparser reads it in order"

# As an unprivileged user, where perf_event_paranoid >= 2 forbids kernel samples.
if [ "$paranoid" -ge 2 ] && command -v setpriv >/dev/null; then
	chmod 755 . && mkdir -m 777 user
	(cd user && AUTOPROF_KERNEL=1 setpriv --reuid=nobody --regid=nogroup --clear-groups \
		env LD_PRELOAD="$LIB" "$B/progs/syscalls" 2>err.txt)
	rc=$?
	grep -q 'kernel samples are not permitted here' user/err.txt && [ "$rc" = 0 ] &&
		perf report -f -i user/perf.data --stdio 2>/dev/null | grep -q 'do_writes'
	ok $? "unprivileged: one line says so, and user space is still sampled" || diag_file user/err.txt
else
	skip "needs perf_event_paranoid >= 2 and setpriv"
fi
done_testing
