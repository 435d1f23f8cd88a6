/* SPDX-License-Identifier: MIT */
/*
 * whole_file.c - files that appear only whole (whole_file.h). An unnamed
 * file is named through /proc/thread-self/fd (this thread's fd table: a
 * thread may have one of its own), else with AT_EMPTY_PATH (which needs
 * CAP_DAC_READ_SEARCH). Raw system calls only: async-signal-safe, run by
 * the writer's helper too (writer_helper.c), and linked into the launcher
 * (outside mode writes FILE.stat with stat_records.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common.h"
#include "whole_file.h"

/* No way of naming an unnamed file is open to this process (no /proc, no
 * CAP_DAC_READ_SEARCH): its files are made by their names. */
static bool names_fail;

int whole_file__open(const char *path, char *dir)
{
	const char *slash = strrchr(path, '/');
	size_t n = slash ? (size_t)(slash - path) : 0;
	int fd;

	if (__atomic_load_n(&names_fail, __ATOMIC_RELAXED))
		return -EOPNOTSUPP;
	if (!slash)
		dir[n++] = '.';
	else if (n == 0)
		dir[n++] = '/';
	else
		memcpy(dir, path, n);
	dir[n] = '\0';
	fd = (int)raw_syscall(SYS_openat, AT_FDCWD, dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
	return fd < 0 ? -errno : fd;
}

/* Does linkat's error e say that this way of naming an unnamed file is not open to us? */
static bool way_closed(int e)
{
	/* EXDEV: the program changed directory under a relative path */
	return e == ENOENT || e == EPERM || e == EACCES || e == ENOTDIR || e == EOPNOTSUPP ||
	       e == EINVAL || e == EXDEV;
}

int whole_file__link(int fd, const char *path)
{
	char proc[40] = "/proc/thread-self/fd/", digits[12];
	int n = 0, len = (int)strlen(proc);

	for (unsigned v = (unsigned)fd; n == 0 || v; v /= 10)
		digits[n++] = (char)('0' + v % 10);
	while (n)
		proc[len++] = digits[--n];
	proc[len] = '\0';
	if (!raw_syscall(SYS_linkat, AT_FDCWD, proc, AT_FDCWD, path, AT_SYMLINK_FOLLOW))
		return 0;
	if (!way_closed(errno)) /* linkat's two ways: see the top */
		return -errno;
	if (!raw_syscall(SYS_linkat, fd, "", AT_FDCWD, path, AT_EMPTY_PATH))
		return 0;
	if (!way_closed(errno))
		return -errno;
	__atomic_store_n(&names_fail, true, __ATOMIC_RELAXED);
	return -ENOLINK;
}
