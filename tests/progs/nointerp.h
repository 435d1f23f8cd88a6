/* SPDX-License-Identifier: MIT */
/*
 * nointerp.h - a path whose exec fails after its lookup: a script whose
 * interpreter does not exist (ENOENT, as for a missing file, and the process
 * goes on). The library finishes its file before such an exec and goes on
 * in it after; an exec of a path that does not exist it sees fail first, and
 * lets fail alone. The tests of the exec paths that fail use this one.
 */
#ifndef NOINTERP_H
#define NOINTERP_H
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Make ./nointerp.sh (written beside, then renamed over: processes that make it at once never
 * see it empty); before any signal handler that execs it. */
static const char *nointerp_path(void)
{
	static const char path[] = "./nointerp.sh", body[] = "#!/nonexistent/interpreter\n";
	char tmp[64];
	int fd;

	snprintf(tmp, sizeof(tmp), "%s.%d", path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (fd >= 0) {
		if (write(fd, body, sizeof(body) - 1) == (ssize_t)sizeof(body) - 1)
			rename(tmp, path);
		close(fd);
		unlink(tmp);
	}
	return path;
}
#endif
