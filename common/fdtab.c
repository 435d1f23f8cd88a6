/* SPDX-License-Identifier: MIT */
/*
 * fdtab.c - which file descriptors are the profiler's own: its perf events,
 * its output file, libunwind's pipe. fds.c keeps the program from closing
 * them; everything in the library closes its own through fdtab__close().
 * Atomics and raw system calls only, every function async-signal-safe: the
 * library's signal handlers use the table too (handler/writer_fd.c, and
 * writer.c's new file at a window's end), so the file stays whole.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common.h"

#define FD_BITS 65536
static unsigned long ours[FD_BITS / (8 * sizeof(unsigned long))];
#define WORD(fd) ((unsigned)(fd) / (8 * sizeof(unsigned long)))
#define BIT(fd)	 (1UL << ((unsigned)(fd) % (8 * sizeof(unsigned long))))

/* Mark fd as the profiler's (a negative fd is passed through). Async-signal-safe. */
int fdtab__own(int fd)
{
	if (fd >= 0 && fd < FD_BITS)
		__atomic_fetch_or(&ours[WORD(fd)], BIT(fd), __ATOMIC_RELAXED);
	return fd;
}

/* Forget fd as the profiler's without closing it (the number is the program's now).
 * Async-signal-safe. */
void fdtab__disown(int fd)
{
	if (fd >= 0 && fd < FD_BITS)
		__atomic_fetch_and(&ours[WORD(fd)], ~BIT(fd), __ATOMIC_RELAXED);
}

/* Is fd one of the profiler's? Async-signal-safe. */
bool fdtab__is_own(int fd)
{
	return fd >= 0 && fd < FD_BITS &&
	       (__atomic_load_n(&ours[WORD(fd)], __ATOMIC_RELAXED) & BIT(fd));
}

/* Close one of the profiler's fds, past the program's close(). Async-signal-safe. */
int fdtab__close(int fd)
{
	if (fd >= 0 && fd < FD_BITS)
		__atomic_fetch_and(&ours[WORD(fd)], ~BIT(fd), __ATOMIC_RELAXED);
	return (int)raw_syscall(SYS_close, fd);
}

/* The next fd of ours at or above fd, or -1. */
int fdtab__next_own(int fd)
{
	for (; fd >= 0 && fd < FD_BITS; fd++) {
		if (!ours[WORD(fd)]) {
			fd |= (int)(8 * sizeof(unsigned long)) - 1;
			continue;
		}
		if (fdtab__is_own(fd))
			return fd;
	}
	return -1;
}

/*
 * The lowest number our fds take: the program's soft RLIMIT_NOFILE as it was
 * when we first asked (one above the highest number it can open), or, when
 * the soft limit is the hard one, the top of the hard range; never below
 * AP_FD_FLOOR nor above MAX_HIGH (the kernel sizes a process's fd table to
 * its highest fd). Our fds then cost the program none of its own: it opens
 * exactly as many files as without us, and a program that lowers its limit
 * later only moves further away. Async-signal-safe (raw system calls).
 */
#define MAX_HIGH  16384
#define HIGH_ROOM 64 /* numbers kept for us above the floor */

static int high_floor;

static int limits(struct rlimit *rl)
{
	return (int)raw_syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, rl);
}

static int fd_floor(void)
{
	int f = __atomic_load_n(&high_floor, __ATOMIC_RELAXED);
	struct rlimit rl;

	if (f)
		return f;
	if (limits(&rl) < 0)
		rl.rlim_cur = rl.rlim_max = AP_FD_FLOOR;
	f = rl.rlim_cur < rl.rlim_max
		? (int)(rl.rlim_cur > MAX_HIGH ? MAX_HIGH : rl.rlim_cur)
		: (int)(rl.rlim_max > MAX_HIGH ? MAX_HIGH : rl.rlim_max) - HIGH_ROOM;
	if (f < AP_FD_FLOOR)
		f = AP_FD_FLOOR;
	__atomic_store_n(&high_floor, f, __ATOMIC_RELAXED);
	return f;
}

/*
 * A new number at or above the floor for fd (fd stays open), or -errno. The
 * soft limit is raised for the dup and put back at once where the floor is
 * above it. Async-signal-safe.
 */
int fdtab__dup_high(int fd, bool cloexec)
{
	int min = fd_floor(), cmd = cloexec ? F_DUPFD_CLOEXEC : F_DUPFD, nfd;
	struct rlimit old, wide;
	bool raised = false;

	if (limits(&old) == 0 && old.rlim_cur < (rlim_t)min + HIGH_ROOM &&
	    old.rlim_max >= (rlim_t)min + HIGH_ROOM) {
		wide = old;
		wide.rlim_cur = (rlim_t)min + HIGH_ROOM;
		raised = raw_syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, &wide, NULL) == 0;
	}
	nfd = (int)raw_syscall(SYS_fcntl, fd, cmd, min);
	if (raised)
		raw_syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, &old, NULL);
	if (nfd < 0)
		nfd = (int)raw_syscall(SYS_fcntl, fd, cmd, AP_FD_FLOOR);
	return nfd < 0 ? -errno : nfd;
}

/*
 * Move a new fd of ours to the high range (fdtab__dup_high), close-on-exec unless
 * asked otherwise, and own it. Where no high fd can be had, it stays where it
 * is. (Raw system calls: the program's F_DUPFD goes through fds.c, ours must
 * not.) Async-signal-safe.
 */
int fdtab__move_high(int fd, bool cloexec)
{
	int high = fdtab__dup_high(fd, cloexec);

	if (high >= 0) {
		raw_syscall(SYS_close, fd);
		fd = high;
	}
	return fdtab__own(fd);
}

/*
 * Does our fd take one of the numbers the program can open? True when it
 * stayed below AP_FD_FLOOR (the hard RLIMIT_NOFILE left no room above the
 * program's range: fdtab__move_high could not lift it) and below the soft limit.
 * The holder then keeps no fd (the writer opens its file for each write) or
 * does without. Async-signal-safe (raw system calls).
 */
bool fdtab__costs(int fd)
{
	struct rlimit rl;

	return fd >= 0 && fd < AP_FD_FLOOR && limits(&rl) == 0 && (rlim_t)fd < rl.rlim_cur;
}

/*
 * Does the hard RLIMIT_NOFILE leave no number at or above AP_FD_FLOOR? Then
 * every new fd of ours would take one the program can open (fdtab__costs).
 * Async-signal-safe (raw system calls).
 */
bool fdtab__no_room_high(void)
{
	struct rlimit rl;

	return limits(&rl) == 0 && rl.rlim_max <= AP_FD_FLOOR;
}
