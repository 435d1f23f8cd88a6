/* SPDX-License-Identifier: MIT */
/*
 * writer_parts.h - what the writer's files share: writer.c (the file and its
 * appends), writer_fd.c (its fd), writer_lock.c (one write at a time) and
 * writer_helper.c (a transient writer's writes, made in a helper with its
 * own fd table).
 */
#ifndef AUTOPROF_HANDLER_WRITER_PARTS_H
#define AUTOPROF_HANDLER_WRITER_PARTS_H

#include <sys/uio.h>

#include "handler.h"

/* Records to write: an append's (none: the features alone), a new file's first. */
struct chunk {
	const void *buf;
	size_t len;
};

/* One write of the writer's, run with w->fd attached; 0 or -errno. */
typedef int (*write_op)(struct writer *w, void *arg);

/* writer_fd.c, each async-signal-safe: fd's device and inode (0 or -errno); w->fd checked to
 * be the file still (or opened again by path); the file opened by its path, checked to be
 * ours (fd or -errno; raw system calls only: the helper runs it); the file made, unnamed where
 * it can be, its identity learnt (fd or -errno; the helper runs it too); the file on w->fd,
 * whole, given its name if it has none (0 or -errno, -ENOLINK: it cannot be here); a transient
 * writer's fd for one write, and closed after it. */
int writer_fd__identity(int fd, uint64_t *dev, uint64_t *ino);
int writer_fd__check(struct writer *w);
int writer_fd__open_again(struct writer *w);
int writer_fd__make(struct writer *w);
int writer_fd__name(struct writer *w);
int writer_fd__attach(struct writer *w);
void writer_fd__detach(struct writer *w);

/* writer_lock.c: take the lock (false: busy for too long), give it back. Async-signal-safe. */
bool writer_lock__take(struct writer *w);
void writer_lock__give(struct writer *w);

/* writer_helper.c: run op in a helper; op's result or -EMFILE (said once). Async-signal-safe. */
int writer_helper__run(struct writer *w, write_op op, void *arg);

/* writer_file.c, each async-signal-safe, 0 or -errno: pwritev/pwrite until done; events[i]'s
 * attr and the offset of its id; the header and every attr with its id (a new file); under the
 * lock, len bytes of records appended with the features after them and the header's size; under
 * the lock, w->path made (never through a symlink nor over a file), whole before it is named,
 * with its head, the len bytes of records at buf and the features. */
int writer_file__pwritev_all(int fd, struct iovec *iov, int n, uint64_t off);
/* writer_file__pwritev_all() for a write its caller found within RLIMIT_FSIZE already (one
 * check a commit, not two). Async-signal-safe. */
int writer_file__pwritev_fitted(int fd, struct iovec *iov, int n, uint64_t off);
int writer_file__pwrite_all(int fd, const void *buf, size_t len, uint64_t off);
int writer_file__write_attr(struct writer *w, int i);
int writer_file__write_head(struct writer *w);
int writer_file__commit(struct writer *w, const void *buf, size_t len);
int writer_file__create(struct writer *w, const void *buf, size_t len);
/* writer_file.c: under the lock, on w->fd, a making the finish took over (its thread's deadly
 * signal interrupted it) done again with the staged records, named. 0 or -errno. */
int writer_file__make_again(struct writer *w);

#endif
