/* SPDX-License-Identifier: MIT */
/*
 * old_file.c - an output file that is already there moved aside to
 * PATH.old before a new one is made, as perf record does: by the library's
 * writer, the launcher's outside-mode file, its one-file merge and
 * `autoprof merge`. Not async-signal-safe.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>

#include "common.h"

int old_file__move_aside(const char *path)
{
	char old[PATH_MAX + 8];
	struct stat st;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	snprintf(old, sizeof(old), "%s.old", path);
	return rename(path, old) < 0 ? -errno : 0;
}
