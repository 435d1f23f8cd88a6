/* SPDX-License-Identifier: MIT */
/*
 * writer_fd.c - the writer's fd on its file: checked before every write
 * (the program may have closed the number by a raw system call and reused
 * it: the file is then opened again by its path, and one line says when it
 * cannot be), and for a transient writer, which keeps no fd, opened for each
 * write and closed after it. Raw system calls: async-signal-safe.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "whole_file.h"
#include "writer_parts.h"

/* fd's device and inode. Returns 0 or -errno. Async-signal-safe. */
int writer_fd__identity(int fd, uint64_t *dev, uint64_t *ino)
{
	struct stat st;

	if (raw_syscall(SYS_fstat, fd, &st) < 0)
		return -errno;
	*dev = (uint64_t)st.st_dev;
	*ino = (uint64_t)st.st_ino;
	return 0;
}

/* Say once, from anywhere, that the file is no longer reachable. Async-signal-safe. */
static void say_lost(void)
{
	static int said;
	static const char msg[] =
	    "autoprof: the program took the profile's file descriptor or replaced the "
	    "file, and it cannot be opened again; profiling stops here (said once)\n";

	log__say_once(&said, msg, sizeof(msg) - 1);
}

/*
 * Under the lock: make sure w->fd is still the file we opened (the program
 * may have closed it by a raw system call and reused the number); if not,
 * open the file again by its path. Returns 0 or -errno. Async-signal-safe.
 */
int writer_fd__check(struct writer *w)
{
	uint64_t dev, ino;
	int fd, high;

	if (w->fd < 0)
		return -EBADF;
	if (!writer_fd__identity(w->fd, &dev, &ino) && dev == w->dev && ino == w->ino)
		return 0;
	fdtab__disown(w->fd); /* the number is the program's now: never closed by us */
	w->fd = -1;
	fd = (int)raw_syscall(SYS_openat, AT_FDCWD, w->path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || writer_fd__identity(fd, &dev, &ino) || dev != w->dev || ino != w->ino) {
		if (fd >= 0)
			raw_syscall(SYS_close, fd);
		__atomic_store_n(&w->error, ESTALE, __ATOMIC_RELAXED);
		say_lost();
		return -ESTALE;
	}
	high = fdtab__dup_high(fd, true);
	if (high >= 0) {
		raw_syscall(SYS_close, fd);
		fd = high;
	}
	w->fd = fdtab__own(fd);
	return 0;
}

/*
 * Open the file by its path for a transient writer's write: fd, or -errno
 * (-ESTALE, said once, when the path is no longer our file). Raw system
 * calls: also run by the helper, which must not touch the fd table's
 * bookkeeping. Async-signal-safe.
 */
int writer_fd__open_again(struct writer *w)
{
	uint64_t dev, ino;
	int fd = (int)raw_syscall(SYS_openat, AT_FDCWD, w->path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (writer_fd__identity(fd, &dev, &ino) || dev != w->dev || ino != w->ino) {
		raw_syscall(SYS_close, fd);
		__atomic_store_n(&w->error, ESTALE, __ATOMIC_RELAXED);
		say_lost();
		return -ESTALE;
	}
	return fd;
}

/* w->path's directory (static: used under the writer's lock; the helper shares our memory). */
static char dir[PATH_MAX] AP_LARGE_BSS;

/*
 * Make w's file and learn its identity: unnamed (w->unnamed; writer_fd__name
 * names it once it is whole) where the file system can, else at w->path, never
 * through a symlink nor over a file. A thread in seccomp makes no system call
 * it did not make before (linkat). The fd, or -errno. Raw system calls only
 * (the helper runs it). Async-signal-safe.
 */
int writer_fd__make(struct writer *w)
{
	int fd = -EOPNOTSUPP, err;

	w->unnamed = false;
	if (!ap_sandboxed)
		fd = whole_file__open(w->path, dir);
	if (fd == -EMFILE || fd == -ENFILE)
		return fd;
	if (fd >= 0)
		w->unnamed = true;
	else
		fd = (int)raw_syscall(SYS_openat, AT_FDCWD, w->path,
				      O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	err = writer_fd__identity(fd, &w->dev, &w->ino);
	if (err) {
		raw_syscall(SYS_close, fd);
		if (!w->unnamed)
			raw_syscall(SYS_unlink, w->path);
		return err;
	}
	return fd;
}

/*
 * Under the lock, the file on w->fd whole: give it its name, w->path, if it
 * has none (never over a file there: -EEXIST), and put the file opened by
 * that name on w->fd (its close is then seen under its name: inotify's
 * IN_CLOSE_WRITE, which --on-window waits for). 0 or -errno; -ENOLINK: it
 * cannot be named here (the caller makes a file by its name instead:
 * whole_file.c). Raw system calls only (the helper runs it). Async-signal-safe.
 */
int writer_fd__name(struct writer *w)
{
	uint64_t dev, ino;
	int err, fd;

	if (!w->unnamed)
		return 0;
	err = whole_file__link(w->fd, w->path);
	if (err)
		return err;
	w->unnamed = false;
	fd = (int)raw_syscall(SYS_openat, AT_FDCWD, w->path,
			      O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return 0; /* written and named: its close is seen as an unnamed file's */
	if (!writer_fd__identity(fd, &dev, &ino) && dev == w->dev && ino == w->ino)
		raw_syscall(SYS_dup3, fd, w->fd, O_CLOEXEC);
	raw_syscall(SYS_close, fd);
	return 0;
}

/*
 * Under the lock: give w an fd on its file for one write (check_fd, or for
 * a transient writer a fresh one, writer_fd__detach() closes it). Returns 0 or -errno.
 * Async-signal-safe.
 */
int writer_fd__attach(struct writer *w)
{
	int fd;

	if (!w->transient)
		return writer_fd__check(w);
	fd = writer_fd__open_again(w);
	if (fd < 0)
		return fd;
	__atomic_store_n(&w->fd, fdtab__own(fd), __ATOMIC_RELEASE);
	return 0;
}

/* Under the lock: a transient writer's fd is closed after each write. Async-signal-safe. */
void writer_fd__detach(struct writer *w)
{
	int fd = w->fd;

	if (!w->transient || fd < 0)
		return;
	__atomic_store_n(&w->fd, -1, __ATOMIC_RELEASE);
	fdtab__close(fd);
}
