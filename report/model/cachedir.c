// SPDX-License-Identifier: MIT
/*
 * cachedir.c - the report's cache folder, $XDG_CACHE_HOME/autoprof (else
 * ~/.cache/autoprof), and what it holds (the kallsyms table, debug/ of
 * debugcache.c), opened so that another user cannot hand us a file: every
 * folder from autoprof/ down must be a directory of this user that no one
 * else may write, every file a regular file of this user, none reached
 * through a symbolic link. Each is opened relative to the descriptor of the
 * folder already checked, so nothing can be swapped between the check and
 * the use. The base ($XDG_CACHE_HOME or ~/.cache) is the user's to choose:
 * a link there is followed.
 */
#include "model/model.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

bool cachedir__ours(int fd, bool dir)
{
	struct stat st;

	if (fstat(fd, &st) || st.st_uid != geteuid())
		return false;
	return dir ? S_ISDIR(st.st_mode) && !(st.st_mode & (S_IWGRP | S_IWOTH))
		   : S_ISREG(st.st_mode);
}

int cachedir__sub(int parent, const char *name, bool mkdirs)
{
	int fd;

	if (parent < 0)
		return -1;
	if (mkdirs)
		mkdirat(parent, name, 0700);
	fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	close(parent);
	if (fd >= 0 && !cachedir__ours(fd, true)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

int cachedir__open(bool mkdirs)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char base[4096];
	int n;

	if (xdg && *xdg == '/')
		n = snprintf(base, sizeof(base), "%s", xdg);
	else if (home && *home == '/')
		n = snprintf(base, sizeof(base), "%s/.cache", home);
	else
		return -1;
	if (n < 0 || (size_t)n >= sizeof(base))
		return -1;
	if (mkdirs)
		mkdir(base, 0700);
	return cachedir__sub(open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC), "autoprof", mkdirs);
}

int cachedir__file(int dir, const char *name)
{
	int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0 && !cachedir__ours(fd, false)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

int cachedir__tmp(int dir, const char *name, char *tmp, size_t len)
{
	struct timespec ts;
	unsigned i;
	int fd;

	for (i = 0; i < 16; i++) {
		clock_gettime(CLOCK_REALTIME, &ts);
		snprintf(tmp, len, "%s.%d.%lx", name, (int)getpid(), (unsigned long)ts.tv_nsec ^ i);
		fd = openat(dir, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	return -1;
}
