/* SPDX-License-Identifier: MIT */
/*
 * fds.c - keep the program's hands off the profiler's file descriptors, and
 * the profiler's off the program's low ones.
 *
 * close, close_range and closefrom are interposed: a program that closes
 * every fd (daemons, shells, test harnesses) leaves ours open, so profiling
 * goes on and no fd of ours can be reused under us, and one line says so.
 * pipe and pipe2 are interposed so that the pipe libunwind opens for itself
 * lands above AP_FD_FLOOR rather than on fds 3 and 4, which programs and
 * shell scripts expect to be free.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

#define AP_API __attribute__((visibility("default")))

static void say_kept(void)
{
	static int said;

	if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
		pr_warn("the program closes file descriptors above %d that are the profiler's; "
			"they stay open and profiling goes on (said once)",
			AP_FD_FLOOR - 1);
}

AP_API int close(int fd)
{
	if (ap_is_own(fd)) {
		say_kept();
		return 0;
	}
	return (int)syscall(SYS_close, fd);
}

/* close_range over [first, last] less the profiler's fds. */
AP_API int close_range(unsigned int first, unsigned int last, int flags)
{
	unsigned int from = first;
	int own = ap_next_own((int)(first > INT32_MAX ? INT32_MAX : first));

	while (own >= 0 && (unsigned int)own <= last) {
		if ((unsigned int)own > from && syscall(SYS_close_range, from, own - 1, flags) < 0)
			return -1;
		if (!(flags & CLOSE_RANGE_CLOEXEC))
			say_kept();
		from = (unsigned int)own + 1;
		if (from == 0)
			return 0;
		own = ap_next_own(own + 1);
	}
	if (from > last)
		return 0;
	return (int)syscall(SYS_close_range, from, last, flags);
}

AP_API void closefrom(int lowfd)
{
	close_range(lowfd < 0 ? 0 : (unsigned int)lowfd, ~0U, 0);
}

/* A pipe libunwind makes for itself (its caller is in libunwind) goes high. */
static void relocate_if_unwinder(int fds[2], void *caller)
{
	if (!unwind__owns_pc((uintptr_t)caller))
		return;
	fds[0] = ap_move_high(fds[0], true);
	fds[1] = ap_move_high(fds[1], true);
}

AP_API int pipe2(int fds[2], int flags)
{
	if (syscall(SYS_pipe2, fds, flags) < 0)
		return -1;
	relocate_if_unwinder(fds, __builtin_return_address(0));
	return 0;
}

AP_API int pipe(int fds[2])
{
	if (syscall(SYS_pipe2, fds, 0) < 0)
		return -1;
	relocate_if_unwinder(fds, __builtin_return_address(0));
	return 0;
}
