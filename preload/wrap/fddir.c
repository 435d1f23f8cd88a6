/* SPDX-License-Identifier: MIT */
/*
 * fddir.c - the program's listing of its own descriptors shows its own only.
 *
 * A program that lists /proc/self/fd (or /dev/fd, /proc/<pid>/fd,
 * /proc/thread-self/fd) to count or close its descriptors must not find the
 * profiler's there: opendir/fdopendir note such a directory stream, and
 * readdir & co skip the entries that are ours (fdtab.c). Any other directory
 * is the plain call. glibc's scandir calls readdir inside libc, unseen:
 * scandir & co are wrapped too, and drop our entries from the list they
 * return (libuv's uv_fs_scandir, node's fs.readdirSync, lists so). ftw and
 * nftw are not.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "wrap.h"

typedef DIR *(*opendir_fn)(const char *);
typedef DIR *(*fdopendir_fn)(int);
typedef struct dirent *(*readdir_fn)(DIR *);
typedef int (*readdir_r_fn)(DIR *, struct dirent *, struct dirent **);
typedef int (*closedir_fn)(DIR *);

/* The open streams over a descriptor directory of this process (few at a time). */
#define MAX_STREAMS 32
static DIR *streams[MAX_STREAMS];

static void *real(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

/* Is st the descriptor directory of this process (or of one of its threads)? */
static bool is_fd_dir(const struct stat *st)
{
	static dev_t proc_dev;
	struct stat self;

	if (fdtab__next_own(0) < 0)
		return false; /* nothing of ours to hide */
	if (!proc_dev && stat("/proc", &self) == 0)
		proc_dev = self.st_dev;
	if (st->st_dev != proc_dev)
		return false; /* not in /proc: no stat of /proc/self/fd for every opendir */
	return (stat("/proc/self/fd", &self) == 0 && self.st_dev == st->st_dev &&
		self.st_ino == st->st_ino) ||
	       (stat("/proc/thread-self/fd", &self) == 0 && self.st_dev == st->st_dev &&
		self.st_ino == st->st_ino);
}

static void note(DIR *d)
{
	for (int i = 0; i < MAX_STREAMS; i++) {
		DIR *expected = NULL;

		if (__atomic_compare_exchange_n(&streams[i], &expected, d, false, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED))
			return;
	}
}

static bool noted(DIR *d)
{
	for (int i = 0; i < MAX_STREAMS; i++)
		if (__atomic_load_n(&streams[i], __ATOMIC_ACQUIRE) == d)
			return true;
	return false;
}

static void forget(DIR *d)
{
	for (int i = 0; i < MAX_STREAMS; i++) {
		DIR *expected = d;

		__atomic_compare_exchange_n(&streams[i], &expected, NULL, false, __ATOMIC_ACQ_REL,
					    __ATOMIC_RELAXED);
	}
}

/* Is this entry's name the number of one of our descriptors? */
static bool hidden(const char *name)
{
	char *end;
	long fd;

	if (name[0] < '0' || name[0] > '9')
		return false;
	fd = strtol(name, &end, 10);
	return !*end && fd <= INT32_MAX && fdtab__is_own((int)fd);
}

AP_API DIR *opendir(const char *name)
{
	static opendir_fn next;
	struct stat st;
	DIR *d;

	if (!next)
		next = (opendir_fn)real("opendir");
	if (!next) {
		errno = ENOSYS;
		return NULL;
	}
	d = next(name);
	if (d) {
		int saved = errno;

		if (fstat(dirfd(d), &st) == 0 && is_fd_dir(&st))
			note(d);
		errno = saved;
	}
	return d;
}

AP_API DIR *fdopendir(int fd)
{
	static fdopendir_fn next;
	struct stat st;
	DIR *d;

	if (!next)
		next = (fdopendir_fn)real("fdopendir");
	if (!next) {
		errno = ENOSYS;
		return NULL;
	}
	d = next(fd);
	if (d) {
		int saved = errno;

		if (fstat(fd, &st) == 0 && is_fd_dir(&st))
			note(d);
		errno = saved;
	}
	return d;
}

/*
 * The next entry from the real readdir or readdir64 (named by which), past
 * ours in a descriptor directory. The two differ in name only on 64-bit
 * (struct dirent64 is struct dirent), so one loop serves both.
 */
static struct dirent *read_skipping(DIR *d, const char *which, readdir_fn *next)
{
	struct dirent *e;

	if (!*next)
		*next = (readdir_fn)real(which);
	if (!*next) {
		errno = ENOSYS;
		return NULL;
	}
	do
		e = (*next)(d);
	while (e && noted(d) && hidden(e->d_name));
	return e;
}

AP_API struct dirent *readdir(DIR *d)
{
	static readdir_fn next;

	return read_skipping(d, "readdir", &next);
}

_Static_assert(sizeof(struct dirent) == sizeof(struct dirent64), "dirent is dirent64 here");

AP_API struct dirent64 *readdir64(DIR *d)
{
	static readdir_fn next;

	return (struct dirent64 *)read_skipping(d, "readdir64", &next);
}

AP_API int readdir_r(DIR *d, struct dirent *entry, struct dirent **result)
{
	static readdir_r_fn next;
	int err;

	if (!next)
		next = (readdir_r_fn)real("readdir_r");
	if (!next)
		return ENOSYS;
	do
		err = next(d, entry, result);
	while (!err && *result && noted(d) && hidden((*result)->d_name));
	return err;
}

AP_API int closedir(DIR *d)
{
	static closedir_fn next;

	if (!next)
		next = (closedir_fn)real("closedir");
	if (!next) {
		errno = ENOSYS;
		return -1;
	}
	forget(d);
	return next(d);
}

typedef int (*scandirat_fn)(int, const char *, struct dirent ***, int (*)(const struct dirent *),
			    int (*)(const struct dirent **, const struct dirent **));

/*
 * The real scandirat or scandirat64 (named by which; the same on 64-bit),
 * then our entries out of the list when dir (at dfd) is a descriptor
 * directory of this process: the order of the rest is kept, and the
 * program's filter has seen them (it cannot have kept them: not listed).
 */
static int scan_skipping(const char *which, scandirat_fn *next, int dfd, const char *dir,
			 struct dirent ***list, int (*filter)(const struct dirent *),
			 int (*compar)(const struct dirent **, const struct dirent **))
{
	struct stat st;
	int n, kept = 0, saved;

	if (!*next)
		*next = (scandirat_fn)real(which);
	if (!*next) {
		errno = ENOSYS;
		return -1;
	}
	n = (*next)(dfd, dir, list, filter, compar);
	if (n <= 0)
		return n;
	saved = errno;
	if (fstatat(dfd, dir, &st, 0) == 0 && is_fd_dir(&st)) {
		for (int i = 0; i < n; i++)
			if (hidden((*list)[i]->d_name))
				free((*list)[i]);
			else
				(*list)[kept++] = (*list)[i];
		n = kept;
	}
	errno = saved;
	return n;
}

AP_API int scandirat(int dfd, const char *dir, struct dirent ***list,
		     int (*filter)(const struct dirent *),
		     int (*compar)(const struct dirent **, const struct dirent **))
{
	static scandirat_fn next;

	return scan_skipping("scandirat", &next, dfd, dir, list, filter, compar);
}

AP_API int scandir(const char *dir, struct dirent ***list, int (*filter)(const struct dirent *),
		   int (*compar)(const struct dirent **, const struct dirent **))
{
	static scandirat_fn next;

	return scan_skipping("scandirat", &next, AT_FDCWD, dir, list, filter, compar);
}

AP_API int scandirat64(int dfd, const char *dir, struct dirent64 ***list,
		       int (*filter)(const struct dirent64 *),
		       int (*compar)(const struct dirent64 **, const struct dirent64 **))
{
	static scandirat_fn next;

	return scan_skipping("scandirat64", &next, dfd, dir, (struct dirent ***)list,
			     (int (*)(const struct dirent *))filter,
			     (int (*)(const struct dirent **, const struct dirent **))compar);
}

AP_API int scandir64(const char *dir, struct dirent64 ***list,
		     int (*filter)(const struct dirent64 *),
		     int (*compar)(const struct dirent64 **, const struct dirent64 **))
{
	static scandirat_fn next;

	return scan_skipping("scandirat64", &next, AT_FDCWD, dir, (struct dirent ***)list,
			     (int (*)(const struct dirent *))filter,
			     (int (*)(const struct dirent **, const struct dirent **))compar);
}
