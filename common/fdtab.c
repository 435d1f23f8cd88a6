/* SPDX-License-Identifier: MIT */
/*
 * fdtab.c - which file descriptors are the profiler's own: its perf events,
 * its output file, libunwind's pipe. fds.c keeps the program from closing
 * them; everything in the library closes its own through ap_close(), and
 * reads the small /proc files it needs with ap_read_file().
 */
#include <errno.h>
#include <fcntl.h>
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
	return (int)syscall(SYS_close, fd);
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
 * Move a new fd of ours to AP_FD_FLOOR or above (out of the range programs
 * expect to be theirs), close-on-exec unless asked otherwise, and own it.
 * Where no high fd can be had (a low RLIMIT_NOFILE), it stays where it is.
 * (A raw fcntl: the program's F_DUPFD goes through fds.c, ours must not.)
 */
int ap_move_high(int fd, bool cloexec)
{
	int high = (int)syscall(SYS_fcntl, fd, cloexec ? F_DUPFD_CLOEXEC : F_DUPFD, AP_FD_FLOOR);

	if (high >= 0) {
		syscall(SYS_close, fd);
		fd = high;
	}
	return ap_own(fd);
}

/*
 * Read a small file (from /proc) whole into buf, NUL-terminated; returns its
 * length, or -errno (buf is then ""). Async-signal-safe.
 */
ssize_t ap_read_file(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t len = 0;
	ssize_t n;

	buf[0] = 0;
	if (fd < 0)
		return -errno;
	while (len < cap - 1 && (n = read(fd, buf + len, cap - 1 - len)) > 0)
		len += (size_t)n;
	ap_close(fd);
	buf[len] = 0;
	return (ssize_t)len;
}
