/* SPDX-License-Identifier: MIT */
/*
 * onefile_wstat.c - around the merge of a run's windows (onefile_windows.c):
 * the stamps that name windows, the FILE.<stamp>.merging-PID files a killed
 * launcher leaves, and the counter totals' file. Only the first process
 * writes a .stat (the counters the launcher opened count the whole tree),
 * beside its image's window file of the moment: its last image's last one
 * (the run's totals) takes the last window's name, FILE.<stamp>.stat; an
 * earlier image's, whose counts an exec cut short, is removed, as the merge
 * of a run without windows does (onefile.c). Not async-signal-safe.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "onefile_wstat.h"

bool onefile_wstat__is_stamp(const char *s)
{
	for (size_t i = 0; i < 20; i++) {
		char c = s[i];

		if (i == 0 || i == 16 ? c != '.' : i == 9 ? c != 'T' : (c < '0' || c > '9'))
			return false;
	}
	return true;
}

void onefile_wstat__remove_stale(const char *dir, const char *base)
{
	size_t blen = strlen(base);
	DIR *d = opendir(dir);
	struct dirent *e;

	while (d && (e = readdir(d))) {
		const char *m = strstr(e->d_name, ".merging-");
		char path[2 * PATH_MAX];

		if (!m || !m[9] || strspn(m + 9, "0123456789") != strlen(m + 9) ||
		    (kill(atoi(m + 9), 0) == 0 || errno != ESRCH) ||
		    (size_t)(m - e->d_name) != blen + 20 || strncmp(e->d_name, base, blen) ||
		    !onefile_wstat__is_stamp(e->d_name + blen))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
}

/*
 * Is @name @base[.PID[.N]].<stamp>.stat, written since @since? Sets @stamp
 * (its stamp, without the dot) and @stem_len.
 */
static bool stat_name(const char *dir, const char *base, const char *name, int64_t since,
		      const char **stamp, size_t *stem_len)
{
	size_t len = strlen(name), blen = strlen(base);
	char path[2 * PATH_MAX];
	struct stat st;

	if (len < blen + 25 || strcmp(name + len - 5, ".stat") || strncmp(name, base, blen) ||
	    !onefile_wstat__is_stamp(name + len - 25))
		return false;
	for (size_t i = blen; i < len - 25; i++)
		if (name[i] != '.' && (name[i] < '0' || name[i] > '9'))
			return false;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec < since - 20000000)
		return false;
	*stamp = name + len - 24;
	*stem_len = len - 5;
	return true;
}

void onefile_wstat__take(const char *dir, const char *base, const struct timespec *since,
			 bool quiet)
{
	int64_t t0 = (int64_t)since->tv_sec * 1000000000 + since->tv_nsec;
	char best[NAME_MAX + 1] = "", path[2 * PATH_MAX], to[2 * PATH_MAX];
	size_t best_len = 0;
	DIR *d = opendir(dir);
	struct dirent *e;

	for (int pass = 0; d && pass < 2; pass++) {
		rewinddir(d);
		while ((e = readdir(d))) {
			const char *stamp;
			size_t stem_len;
			int c;

			if (!stat_name(dir, base, e->d_name, t0, &stamp, &stem_len))
				continue;
			c = *best ? strncmp(stamp, best + strlen(best) - 24, 19) : 1;
			if (pass == 0 && (c > 0 || (c == 0 && stem_len > best_len))) {
				/* the latest window (stamps sort as time); at a tie, the exec'd
				 * image's */
				snprintf(best, sizeof(best), "%s", e->d_name);
				best_len = stem_len;
			} else if (pass == 1 && strcmp(e->d_name, best)) {
				snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
				unlink(path);
			}
		}
	}
	if (d)
		closedir(d);
	if (!*best)
		return;
	snprintf(path, sizeof(path), "%s/%s", dir, best);
	snprintf(to, sizeof(to), "%s/%s.%.19s.stat", dir, base, best + strlen(best) - 24);
	if (strcmp(path, to) && rename(path, to) < 0 && !quiet)
		fprintf(stderr, "autoprof: cannot move %s to %s: %s\n", path, to, strerror(errno));
}
