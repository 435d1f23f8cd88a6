/* SPDX-License-Identifier: MIT */
/*
 * textfile.c - the small text files the launcher reads: control endpoints
 * ("key value" lines), replies, /proc/PID/stat and its neighbours. Shared by
 * ctl.c and onefile_live.c. Not async-signal-safe.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launcher.h"

ssize_t textfile__read(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	size_t n = 0;
	ssize_t r;

	if (fd < 0)
		return -1;
	while (n < cap - 1 && (r = read(fd, buf + n, cap - 1 - n)) > 0)
		n += (size_t)r;
	close(fd);
	buf[n] = 0;
	return (ssize_t)n;
}

bool textfile__field(const char *text, const char *key, char *out, size_t cap)
{
	size_t k = strlen(key);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (!strncmp(p, key, k) && p[k] == ' ') {
			size_t n = strcspn(p + k + 1, "\n");

			if (n >= cap)
				n = cap - 1;
			memcpy(out, p + k + 1, n);
			out[n] = 0;
			return true;
		}
	}
	return false;
}

unsigned long long textfile__field_u64(const char *text, const char *key)
{
	char v[32];

	return textfile__field(text, key, v, sizeof(v)) ? strtoull(v, NULL, 10) : 0;
}

bool textfile__stat(const char *path, unsigned long long *start, char *state)
{
	char buf[1024], *p;

	if (textfile__read(path, buf, sizeof(buf)) <= 0 || !(p = strrchr(buf, ')')))
		return false;
	*state = p[2];
	return sscanf(p + 2,
		      "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d "
		      "%*d %*d %llu",
		      start) == 1;
}
