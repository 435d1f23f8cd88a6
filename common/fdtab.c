/* SPDX-License-Identifier: MIT */
/*
 * fdtab.c - which file descriptors are the profiler's own: its perf events,
 * its output file, libunwind's pipe. fds.c keeps the program from closing
 * them; everything in the library closes its own through ap_close(), and
 * reads the small /proc files it needs with ap_read_file().
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
int ap_own(int fd)
{
	if (fd >= 0 && fd < FD_BITS)
		__atomic_fetch_or(&ours[WORD(fd)], BIT(fd), __ATOMIC_RELAXED);
	return fd;
}

/* Forget fd as the profiler's without closing it (the number is the program's now).
 * Async-signal-safe. */
void ap_disown(int fd)
{
	if (fd >= 0 && fd < FD_BITS)
		__atomic_fetch_and(&ours[WORD(fd)], ~BIT(fd), __ATOMIC_RELAXED);
}

/* Is fd one of the profiler's? Async-signal-safe. */
bool ap_is_own(int fd)
{
	return fd >= 0 && fd < FD_BITS &&
	       (__atomic_load_n(&ours[WORD(fd)], __ATOMIC_RELAXED) & BIT(fd));
}

/* Close one of the profiler's fds, past the program's close(). Async-signal-safe. */
int ap_close(int fd)
{
	if (fd >= 0 && fd < FD_BITS)
		__atomic_fetch_and(&ours[WORD(fd)], ~BIT(fd), __ATOMIC_RELAXED);
	return (int)ap_syscall(SYS_close, fd);
}

/* The next fd of ours at or above fd, or -1. */
int ap_next_own(int fd)
{
	for (; fd >= 0 && fd < FD_BITS; fd++) {
		if (!ours[WORD(fd)]) {
			fd |= (int)(8 * sizeof(unsigned long)) - 1;
			continue;
		}
		if (ap_is_own(fd))
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
	return (int)ap_syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, rl);
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
int ap_dup_high(int fd, bool cloexec)
{
	int min = fd_floor(), cmd = cloexec ? F_DUPFD_CLOEXEC : F_DUPFD, nfd;
	struct rlimit old, wide;
	bool raised = false;

	if (limits(&old) == 0 && old.rlim_cur < (rlim_t)min + HIGH_ROOM &&
	    old.rlim_max >= (rlim_t)min + HIGH_ROOM) {
		wide = old;
		wide.rlim_cur = (rlim_t)min + HIGH_ROOM;
		raised = ap_syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, &wide, NULL) == 0;
	}
	nfd = (int)ap_syscall(SYS_fcntl, fd, cmd, min);
	if (raised)
		ap_syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, &old, NULL);
	if (nfd < 0)
		nfd = (int)ap_syscall(SYS_fcntl, fd, cmd, AP_FD_FLOOR);
	return nfd < 0 ? -errno : nfd;
}

/*
 * Move a new fd of ours to the high range (ap_dup_high), close-on-exec unless
 * asked otherwise, and own it. Where no high fd can be had, it stays where it
 * is. (Raw system calls: the program's F_DUPFD goes through fds.c, ours must
 * not.) Async-signal-safe.
 */
int ap_move_high(int fd, bool cloexec)
{
	int high = ap_dup_high(fd, cloexec);

	if (high >= 0) {
		ap_syscall(SYS_close, fd);
		fd = high;
	}
	return ap_own(fd);
}

/*
 * Does our fd take one of the numbers the program can open? True when it
 * stayed below AP_FD_FLOOR (the hard RLIMIT_NOFILE left no room above the
 * program's range: ap_move_high could not lift it) and below the soft limit.
 * The holder then keeps no fd (the writer opens its file for each write) or
 * does without. Async-signal-safe (raw system calls).
 */
bool ap_fd_costs(int fd)
{
	struct rlimit rl;

	return fd >= 0 && fd < AP_FD_FLOOR && limits(&rl) == 0 && (rlim_t)fd < rl.rlim_cur;
}

/*
 * Does the hard RLIMIT_NOFILE leave no number at or above AP_FD_FLOOR? Then
 * every new fd of ours would take one the program can open (ap_fd_costs).
 * Async-signal-safe (raw system calls).
 */
bool ap_no_room_high(void)
{
	struct rlimit rl;

	return limits(&rl) == 0 && rl.rlim_max <= AP_FD_FLOOR;
}

/*
 * Read a small file (from /proc) whole into buf, NUL-terminated; returns its
 * length, or -errno (buf is then ""). Raw system calls, so that no
 * cancellation point of the program's thread lies inside our code and a
 * signal does not cut the read short. Async-signal-safe.
 */
ssize_t ap_read_file(const char *path, char *buf, size_t cap)
{
	int fd = (int)ap_syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	size_t len = 0;
	ssize_t n;

	buf[0] = 0;
	if (fd < 0)
		return -errno;
	while (len < cap - 1) {
		n = ap_syscall(SYS_read, fd, buf + len, cap - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	ap_close(fd);
	buf[len] = 0;
	return (ssize_t)len;
}
