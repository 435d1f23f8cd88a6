#!/bin/sh
# The signal that drains a batched thread's ring never lands in a system
# call: a thread that spends its time in the kernel between short waits
# (epoll_wait, nanosleep, poll, which a handler would cut short with EINTR
# whatever SA_RESTART says) sees no EINTR, batched or not, and with kernel
# samples asked for (AUTOPROF_KERNEL, where allowed).
. "$(dirname "$0")/lib.sh"
needs "$B/progs/syswait"
plan 4

want=$("$B/progs/syswait" 1)
is "$want" "waits 1 eintr 0" "plain: no EINTR"
for env in "AUTOPROF_BATCH=16" "AUTOPROF_BATCH=1" "AUTOPROF_BATCH=16 AUTOPROF_KERNEL=1"; do
	# shellcheck disable=SC2086
	got=$(env $env AUTOPROF_FREQ=4000 AUTOPROF_QUIET=1 AUTOPROF_OUTPUT=w.data LD_PRELOAD=$LIB \
		"$B/progs/syswait" 2)
	is "$got" "$want" "$env at 4 kHz: the program's waits end as without us"
done

done_testing
