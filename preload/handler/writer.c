/* SPDX-License-Identifier: MIT */
/*
 * writer.c - the perf.data file of this process.
 *
 * Layout: header (104) | one id per attr (8 each) | attrs (144 each) | data ... |
 * feature table and bodies. The features are laid out at start (file_features.c)
 * and written again after the data at every append, so the file on disk is a
 * finished profile after every flush: an end that runs none of our code
 * (SIGKILL, a raw exit_group, a seccomp kill) loses only what was not flushed.
 *
 * One append, under the file lock, is three writes:
 *  1. the header's feature bits are cleared (the old feature table is about
 *     to be overwritten by data; data.size still ends where it did);
 *  2. one pwritev: the new data, then the feature table and bodies after it;
 *  3. the header's data.size and feature bits, in one 56-byte pwrite.
 * Dying between 1 and 3 leaves a file whose data is whole up to the previous
 * append and which has no features flagged; at every other moment the file is
 * whole, features included.
 *
 * Everything here that can run in a signal handler uses raw system calls:
 * no cancellation point (a deferred pthread_cancel pending on the thread
 * would otherwise unwind it out of the handler in the middle of a write).
 * One write at a time: the file lock (writer_lock.c).
 *
 * Deferred (every writer until its file is made): the file is made by the
 * first append (writer_file.c), whole before it has its name; with
 * writer__open(defer) (a descendant of a bare LD_PRELOAD run), by the first
 * after the start, with the records staged until then: one that never
 * samples makes none.
 *
 * Transient (w->transient): where the hard RLIMIT_NOFILE leaves no number
 * above the program's (fdtab__costs), the writer keeps no fd between writes,
 * and the program opens as many files as without us: each write opens the
 * file by its path, checks it is still ours, and closes it, in a helper
 * process that has a table of fds of its own (writer_helper.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "pages.h"
#include "writer_parts.h"

#define IDS_OFFSET	sizeof(struct perf_file_header)
#define ATTRS_OFFSET(n) (IDS_OFFSET + (n) * sizeof(uint64_t))
#define DATA_OFFSET(n)	PERF_ALIGN8(ATTRS_OFFSET(n) + (n) * sizeof(struct perf_file_attr))
#define SIZE_AT		offsetof(struct perf_file_header, data.size)
#define BITS_AT		offsetof(struct perf_file_header, adds_features)

/*
 * Under the lock: run op with the file attached. A transient writer writes
 * through a helper, so that no number of the program's is ever taken, not
 * even for the time of a write (another of its threads may be opening its
 * last file); when even that fails, the write is dropped (said once) and the
 * file stays as it was. Returns op's result or -errno. Async-signal-safe.
 */
static int with_file(struct writer *w, write_op op, void *arg)
{
	int err;

	if (w->deferred)
		return 0; /* nothing on disk yet: the creation writes what is in memory */
	if (!w->transient) {
		err = writer_fd__check(w);
		return err ? err : op(w, arg);
	}
	return writer_helper__run(w, op, arg);
}

/* Keep the first write error; returns err. Async-signal-safe. */
static int keep_error(struct writer *w, int err)
{
	if (err)
		__atomic_compare_exchange_n(&w->error, &(int){0}, -err, false, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED);
	return err;
}

/* The write of an append: commit, its error kept. Async-signal-safe. */
static int op_commit(struct writer *w, void *arg)
{
	const struct chunk *c = arg;

	return keep_error(w, writer_file__commit(w, c->buf, c->len));
}

/* Is there a file to write (an fd, or a path opened per write)? Async-signal-safe. */
static bool live(const struct writer *w)
{
	return __atomic_load_n(&w->fd, __ATOMIC_RELAXED) >= 0 || w->transient || w->deferred;
}

/*
 * Prepare the file at path (mode 0600, never through a symlink, an existing
 * file moved to .old): it is made by the first append, with the header, the
 * attrs and their ids, those records and the features (writer_file__create),
 * or by the finish; with defer, by the first append after
 * writer__staging(false) (the appends until then are kept, up to 64 KB), so
 * that a process that never samples makes none. events[0] is the sampling
 * event; every attr gets the sample format our records use, so all share one
 * id position. Returns 0 or -errno. Not async-signal-safe.
 */
int writer__open(struct writer *w, const char *path, const struct writer_event *events, int n,
		 bool defer)
{
	int err;

	memset(w, 0, sizeof(*w));
	w->fd = -1;
	if (strlen(path) >= sizeof(w->path))
		return -ENAMETOOLONG;
	if (n < 1 || n > AP_MAX_EVENTS)
		return -EINVAL;
	strcpy(w->path, path);
	err = old_file__move_aside(path);
	if (err)
		return err;
	w->nr_events = n;
	w->data_offset = w->end = DATA_OFFSET(n);
	for (int i = 0; i < n; i++) {
		struct writer_event *e = &w->events[i];

		*e = events[i];
		e->attr.size = PERF_FILE_ATTR_SIZE;
		/* the memory attrs add the block and its size (memory.h) */
		e->attr.sample_type =
		    AUTOPROF_SAMPLE_TYPE |
		    (events[i].attr.sample_type & (PERF_SAMPLE_ADDR | PERF_SAMPLE_WEIGHT));
		e->attr.sample_id_all = 1;
		/* Every time in the file is CLOCK_MONOTONIC (perf record -k 1):
		 * perf inject --jit requires it of every attr. */
		e->attr.use_clockid = 1;
		e->attr.clockid = CLOCK_MONOTONIC;
		e->attr.disabled = 0;
		e->attr.inherit = 0;
		e->attr.enable_on_exec = 0;
		e->attr.exclude_callchain_kernel = 0;
		/* Without kernel samples every attr says user-only: the file then has
		 * no kernel maps, and perf warns about them for any attr that could
		 * have kernel samples. Counters still count kernel work where
		 * permitted; their totals are STAT records. */
		e->attr.exclude_kernel = events[0].attr.exclude_kernel;
	}
	/* made by the first append (the session's first records), whole: never seen without them */
	w->deferred = true;
	w->staged_cap = defer ? 64 * 1024 : 0;
	/* memory of our own: a forked child opens its file here (pages.h) */
	w->staged = defer ? pages__alloc(w->staged_cap) : NULL;
	w->staging = w->staged != NULL;
	if (!w->staged)
		w->staged_cap = 0;
	return 0;
}

/* A deferred writer's appends are staged (at its start, at its end), or make the file (between:
 * its first flush). Async-signal-safe. */
void writer__staging(struct writer *w, bool on)
{
	if (writer_lock__take(w)) {
		w->staging = on && w->deferred;
		writer_lock__give(w);
	}
}

/* Was the file made (is there one on disk, ours)? */
bool writer__created(const struct writer *w)
{
	return w->ino != 0 && !w->unnamed; /* made and named (writer_file__create) */
}

/*
 * Under the lock, a deferred writer's append: kept while staging if it fits,
 * else written with the file it makes, which is never named before it holds
 * records: made with those staged and these when they fit in the stage
 * together, with these when none are staged, else with those staged and
 * these then appended. Returns 0 or -errno. Async-signal-safe.
 */
static int deferred_append(struct writer *w, const void *buf, size_t len)
{
	int err;

	if (w->staged_len + len <= w->staged_cap) {
		memcpy(w->staged + w->staged_len, buf, len);
		w->staged_len += len;
		w->end += len;
		if (w->staging)
			return 0;
		len = 0;
	}
	if (!w->staged_len)
		return keep_error(w, writer_file__create(w, buf, len));
	err = keep_error(w, writer_file__create(w, w->staged, w->staged_len));
	return err || !len ? err : with_file(w, op_commit, &(struct chunk){buf, len});
}

/*
 * Append len bytes of whole records to the data section, with the features
 * after them, and make both visible to readers. Safe from several threads at
 * once. Returns 0 or -errno (the data is dropped and the first error kept).
 * Async-signal-safe, provided the caller's thread is not itself inside
 * writer__append (the handler's signal is blocked around other callers).
 */
int writer__append(struct writer *w, const void *buf, size_t len)
{
	uint64_t at;

	return writer__append_at(w, buf, len, &at);
}

/*
 * An append (writer__append_at); with stage, where the file is not made yet
 * the bytes are kept with the staged ones, making none by themselves (up to
 * the stage's room). Returns 0 or -errno. Async-signal-safe, as writer__append.
 */
static int append(struct writer *w, const void *buf, size_t len, uint64_t *at, bool stage)
{
	bool staging;
	int err;

	if (!len)
		return 0;
	if (!live(w))
		return -EBADF;
	if (!writer_lock__take(w))
		return -EBUSY;
	*at = w->end; /* under the lock: where this commit appends */
	staging = w->staging;
	w->staging = staging || (stage && w->deferred);
	if (w->sealed)
		err = -EPIPE;
	else if (w->deferred)
		err = deferred_append(w, buf, len);
	else
		err = with_file(w, op_commit, &(struct chunk){buf, len});
	w->staging = staging;
	writer_lock__give(w);
	return err;
}

/*
 * writer__append(), and *at gets the file offset where the bytes went (for
 * writer__patch). Returns 0 or -errno. Async-signal-safe, as writer__append.
 */
int writer__append_at(struct writer *w, const void *buf, size_t len, uint64_t *at)
{
	return append(w, buf, len, at, false);
}

/* writer__append(), but kept with the staged records where the file is not made yet. */
int writer__append_staged(struct writer *w, const void *buf, size_t len)
{
	uint64_t at;

	return append(w, buf, len, &at, true);
}

/* Bytes to write over data already appended. */
struct patch {
	const void *buf;
	size_t len;
	uint64_t at;
};

static int op_patch(struct writer *w, void *arg)
{
	const struct patch *p = arg;

	return writer_file__pwrite_all(w->fd, p->buf, p->len, p->at);
}

/*
 * Write len bytes over the data at offset at (which writer__append_at gave,
 * in this same file: the caller checks w->dev and w->ino): records rewritten
 * in place, their sizes unchanged. Returns 0 or -errno. Async-signal-safe,
 * as writer__append.
 */
int writer__patch(struct writer *w, uint64_t at, const void *buf, size_t len)
{
	int err;

	if (!live(w))
		return -EBADF;
	if (!writer_lock__take(w))
		return -EBUSY;
	if (w->sealed || at < w->data_offset || at + len > w->end)
		err = -EINVAL;
	else if (w->deferred) /* still staged: at is within them */
		err = (memcpy(w->staged + (at - w->data_offset), buf, len), 0);
	else
		err = with_file(w, op_patch, &(struct patch){buf, len, at});
	writer_lock__give(w);
	return err;
}

/* Widen the sample time range the features report. Async-signal-safe. */
void writer__note_times(struct writer *w, uint64_t first, uint64_t last)
{
	ap_atomic_min_nz(&w->first_time, first);
	ap_atomic_max(&w->last_time, last);
}

/*
 * Make feat the features written after the data from now on, and write them
 * now unless the caller's next step writes them anyway (an append, the
 * finish: !now). Returns the features they replace (the caller frees them:
 * no append uses them any more), or feat itself when the lock could not be
 * had. Not async-signal-safe (the caller's own handler must not be appending).
 */
const struct writer_features *writer__set_features(struct writer *w,
						   const struct writer_features *feat, bool now)
{
	const struct writer_features *old;

	if (!writer_lock__take(w))
		return feat;
	old = w->feat;
	w->feat = feat;
	if (now && live(w) && !w->sealed)
		with_file(w, op_commit, &(struct chunk){NULL, 0});
	writer_lock__give(w);
	return old;
}

/* writer__finish's write: the features and the final header (arg: tidy). */
static int op_finish(struct writer *w, void *arg)
{
	int err = __atomic_load_n(&w->error, __ATOMIC_RELAXED) ? -w->error : 0;

	if (!err) /* w->making: this thread's deadly signal interrupted it */
		err = w->making ? writer_file__make_again(w) : writer_file__commit(w, NULL, 0);
	if (!err && *(bool *)arg) {
		const struct writer_features *f = w->feat;
		uint64_t len = f ? f->n * sizeof(struct perf_file_section) + f->len : 0;

		if (raw_syscall(SYS_ftruncate, w->fd, (off_t)(w->end + len)) < 0)
			err = -errno;
	}
	return err;
}

/*
 * Finish the file: seal it, write the features (the latest set) after the
 * data and the final header, then close it. `tidy` (normal context only) cuts
 * off what an earlier, longer feature block left beyond the end.
 * Returns 0 or -errno. Async-signal-safe when !tidy.
 */
int writer__finish(struct writer *w, bool tidy)
{
	bool locked = writer_lock__take(w);
	int err = -EBADF;

	if (w->deferred && !w->sealed) /* a profile: made now (an empty one is discarded) */
		keep_error(w, writer_file__create(w, w->staged, w->staged_len));
	if (!live(w) && w->error) /* the file could not be made: why */
		err = -w->error;
	if (live(w)) {
		err = with_file(w, op_finish, &tidy);
		if (w->fd >= 0)
			fdtab__close(w->fd);
	}
	w->fd = -1;
	w->sealed = true;
	if (locked)
		writer_lock__give(w);
	return err;
}

/*
 * Windows (AUTOPROF_WINDOW): finish the file as it is (the features after
 * its data, the final header) and go on in a new one at path, with the same
 * header, attrs and features, its data the len bytes of records at first
 * (the same lock: no append comes before them) and its time range unset:
 * the appends that follow go there. The caller has flushed every thread's
 * buffer into the old file. Returns 0 or -errno (the new file could not be
 * made: the writer then has no file, and appends fail). Async-signal-safe.
 */
int writer__rotate(struct writer *w, const char *path, const void *first, size_t first_len)
{
	static char prev_path[sizeof(w->path)] AP_LARGE_BSS; /* under the lock */
	size_t len = strlen(path);
	int err;

	if (len >= sizeof(w->path))
		return -ENAMETOOLONG;
	if (!writer_lock__take(w))
		return -EBUSY;
	if (w->sealed) {
		writer_lock__give(w);
		return -EPIPE;
	}
	if (live(w) && !writer_fd__attach(w)) {
		if (!__atomic_load_n(&w->error, __ATOMIC_RELAXED))
			writer_file__commit(w, NULL, 0);
		fdtab__close(w->fd);
	}
	w->fd = -1;
	w->transient = false;
	memcpy(prev_path, w->path, sizeof(prev_path));
	memcpy(w->path, path, len + 1);
	__atomic_store_n(&w->error, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&w->first_time, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&w->last_time, 0, __ATOMIC_RELAXED);
	/* a finished profile, with its features, before it has its name */
	err = keep_error(w, writer_file__create(w, first, first_len));
	if (err) /* the path names the last file of ours (FILE.stat is written beside it) */
		memcpy(w->path, prev_path, sizeof(prev_path));
	writer_lock__give(w);
	return err;
}

/* Drop what a deferred writer kept (the file was made, or never will be). Async-signal-safe. */
static void drop_staged(struct writer *w)
{
	pages__free(w->staged);
	w->staged = NULL;
	w->staged_len = w->staged_cap = 0;
}

/*
 * Seal the file and close it with nothing more written: it is about to be
 * removed (an image of a descendant that took no sample). Async-signal-safe.
 */
void writer__discard(struct writer *w)
{
	bool locked = writer_lock__take(w);

	if (w->fd >= 0)
		fdtab__close(w->fd);
	w->fd = -1;
	w->sealed = true;
	w->deferred = false; /* its staged records are dropped with the process */
	if (locked)
		writer_lock__give(w);
}

/* Close the file as it is (a forked child dropping its parent's writer). */
void writer__abandon(struct writer *w)
{
	if (w->fd >= 0)
		fdtab__close(w->fd);
	w->fd = -1;
	w->transient = false; /* the path is the parent's */
	w->deferred = false;
	drop_staged(w);
}

/*
 * Open a finished file again to append more data (an exec that failed): the
 * next append writes over the features, and writes them again after itself.
 * Returns 0 or -errno. Not async-signal-safe.
 */
int writer__reopen(struct writer *w)
{
	int fd = open(w->path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	uint64_t dev, ino;

	if (fd < 0 && !(errno == EMFILE && w->transient))
		return -errno;
	if (fd >= 0) {
		fd = fdtab__move_high(fd, true);
		if (writer_fd__identity(fd, &dev, &ino) || dev != w->dev || ino != w->ino) {
			fdtab__close(fd);
			return -ESTALE;
		}
	}
	w->fd = fd;
	w->error = 0;
	w->sealed = false;
	w->tail_on_disk = true;
	w->transient = fd < 0 || fdtab__costs(fd);
	writer_fd__detach(w);
	return 0;
}

/* writer__update_attr's write (arg: the attr's index). */
static int op_attr(struct writer *w, void *arg)
{
	return writer_file__write_attr(w, *(int *)arg);
}

/* Write events[i]'s attr again (its period, learned at the end). Not async-signal-safe. */
int writer__update_attr(struct writer *w, int i)
{
	int err;

	if (!live(w) || i < 0 || i >= w->nr_events)
		return -EINVAL;
	if (!writer_lock__take(w))
		return -EBUSY;
	err = with_file(w, op_attr, &i);
	writer_lock__give(w);
	return err;
}

/*
 * The program wants the number of our file's fd: give the file another fd,
 * the lowest free one at or above min, with no append in flight, and leave
 * the old number open for the program's dup2/dup3 to replace. Returns the
 * new fd or -errno. Not async-signal-safe.
 */
int writer__move_fd(struct writer *w, int min)
{
	int fd = -EBADF;

	if (!writer_lock__take(w))
		return -EBUSY;
	if (w->fd >= 0) {
		fd = (int)raw_syscall(SYS_fcntl, w->fd, F_DUPFD_CLOEXEC, min);
		if (fd < 0)
			fd = (int)raw_syscall(SYS_fcntl, w->fd, F_DUPFD_CLOEXEC, 3);
		if (fd >= 0) {
			fdtab__disown(w->fd);
			__atomic_store_n(&w->fd, fdtab__own(fd), __ATOMIC_RELEASE);
		} else {
			fd = -errno;
		}
	} else if (w->transient) {
		fd = 0; /* its fd was closed after its write: the number is free */
	}
	writer_lock__give(w);
	return fd;
}
