/* SPDX-License-Identifier: MIT */
/*
 * writer.c - the perf.data file of this process.
 *
 * Layout: header (104) | one id per attr (8 each) | attrs (144 each) | data ... |
 * feature table and bodies (written by writer__finish). Threads append whole
 * batches of records with writer__append(): each reserves its range with one
 * atomic add, writes it with pwrite(), then commits in file order and patches
 * data.size in the header, so the file on disk is readable by perf up to the
 * last commit at every moment, even if the process is killed.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#define SEALED (1ULL << 62) /* set in reserved once the data section is closed */

#define IDS_OFFSET sizeof(struct perf_file_header)
#define ATTRS_OFFSET(n) (IDS_OFFSET + (n) * sizeof(uint64_t))
#define DATA_OFFSET(n) PERF_ALIGN8(ATTRS_OFFSET(n) + (n) * sizeof(struct perf_file_attr))

static int pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
{
	const char *p = buf;

	while (len) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

static int write_header(struct writer *w, uint64_t data_size, const uint64_t *bits)
{
	struct perf_file_header h = {
		.magic = PERF_FILE_MAGIC,
		.size = sizeof(h),
		.attr_size = sizeof(struct perf_file_attr),
		.attrs = {ATTRS_OFFSET(w->nr_events),
			  w->nr_events * sizeof(struct perf_file_attr)},
		.data = {w->data_offset, data_size},
	};

	if (bits)
		memcpy(h.adds_features, bits, sizeof(h.adds_features));
	return pwrite_all(w->fd, &h, sizeof(h), 0);
}

/* Write events[i]'s attr and the offset of its id. Returns 0 or -errno. */
static int write_attr(struct writer *w, int i)
{
	struct perf_file_attr fa;

	memset(&fa, 0, sizeof(fa));
	memcpy(fa.attr, &w->events[i].attr, PERF_FILE_ATTR_SIZE);
	fa.ids.offset = IDS_OFFSET + (uint64_t)i * sizeof(uint64_t);
	fa.ids.size = sizeof(uint64_t);
	return pwrite_all(w->fd, &fa, sizeof(fa), ATTRS_OFFSET(w->nr_events) + (uint64_t)i * sizeof(fa));
}

/*
 * Move an existing file at path to path.old, as perf record does. A symlink
 * is moved, never followed. Returns 0 or -errno.
 */
static int move_old(const char *path)
{
	char old[PATH_MAX + 8];
	struct stat st;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	snprintf(old, sizeof(old), "%s.old", path);
	if (rename(path, old) < 0)
		return -errno;
	return 0;
}

/*
 * Create path (mode 0600, never through a symlink, an existing file moved to
 * .old) and write the header, the attrs and their ids. events[0] is the
 * sampling event; every attr gets the sample format our records use, so all
 * share one id position. Returns 0 or -errno. Not async-signal-safe.
 */
int writer__open(struct writer *w, const char *path, const struct writer_event *events, int n)
{
	int fd, err;

	memset(w, 0, sizeof(*w));
	w->fd = -1;
	if (strlen(path) >= sizeof(w->path))
		return -ENAMETOOLONG;
	if (n < 1 || n > AP_MAX_EVENTS)
		return -EINVAL;
	strcpy(w->path, path);
	err = move_old(path);
	if (err)
		return err;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	w->fd = ap_move_high(fd, true);

	w->nr_events = n;
	w->data_offset = DATA_OFFSET(n);
	w->reserved = w->committed = w->data_offset;
	err = write_header(w, 0, NULL);
	for (int i = 0; i < n && !err; i++) {
		struct writer_event *e = &w->events[i];

		*e = events[i];
		e->attr.size = PERF_FILE_ATTR_SIZE;
		e->attr.sample_type = AUTOPROF_SAMPLE_TYPE;
		e->attr.sample_id_all = 1;
		e->attr.disabled = 0;
		e->attr.inherit = 0;
		e->attr.enable_on_exec = 0;
		e->attr.exclude_callchain_kernel = 0;
		/* Without kernel samples every attr says user-only: the file then has
		 * no kernel maps, and perf warns about them for any attr that could
		 * have kernel samples. Counters still count kernel work where
		 * permitted; their totals are STAT records. */
		e->attr.exclude_kernel = events[0].attr.exclude_kernel;
		err = pwrite_all(w->fd, &e->id, sizeof(e->id), IDS_OFFSET + (uint64_t)i * sizeof(e->id));
		if (!err)
			err = write_attr(w, i);
	}
	if (err) {
		ap_close(w->fd);
		unlink(path);
		w->fd = -1;
	}
	return err;
}

/*
 * Append len bytes of whole records to the data section and make them
 * visible to readers (data.size in the header). Safe from several threads at
 * once. Returns 0 or -errno (the data is dropped and the first error kept).
 * Async-signal-safe, provided the caller's thread is not itself inside
 * writer__append (the handler's signal is blocked around other callers).
 */
int writer__append(struct writer *w, const void *buf, size_t len)
{
	uint64_t off, end, size;
	int err;

	if (w->fd < 0 || !len)
		return w->fd < 0 ? -EBADF : 0;
	off = __atomic_fetch_add(&w->reserved, len, __ATOMIC_ACQ_REL);
	if (off & SEALED)
		return -EPIPE;
	err = pwrite_all(w->fd, buf, len, off);
	if (err)
		__atomic_compare_exchange_n(&w->error, &(int){0}, -err, false, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED);

	/* Commit in file order: wait for the writers of earlier ranges. */
	while (__atomic_load_n(&w->committed, __ATOMIC_ACQUIRE) != off)
		sched_yield();
	end = off + len;
	__atomic_store_n(&w->committed, end, __ATOMIC_RELEASE);
	if (__atomic_load_n(&w->error, __ATOMIC_RELAXED))
		return err;
	size = __atomic_load_n(&w->committed, __ATOMIC_ACQUIRE) - w->data_offset;
	pwrite_all(w->fd, &size, sizeof(size), offsetof(struct perf_file_header, data.size));
	return err;
}

/*
 * Close the data section: no append succeeds after this. Waits for appends in
 * flight and returns the offset where the data ends and features may start.
 * Not async-signal-safe (the caller's own handler must not be appending).
 */
uint64_t writer__seal(struct writer *w)
{
	uint64_t end = __atomic_fetch_or(&w->reserved, SEALED, __ATOMIC_ACQ_REL) & ~SEALED;

	while (__atomic_load_n(&w->committed, __ATOMIC_ACQUIRE) != end)
		sched_yield();
	w->sealed_at = end;
	return end;
}

/*
 * Like writer__seal(), from a signal handler that may have interrupted an
 * append on its own thread: wait a bounded time, then take what is committed
 * (readers see data.size = committed). Async-signal-safe.
 */
uint64_t writer__seal_bounded(struct writer *w)
{
	uint64_t end = __atomic_fetch_or(&w->reserved, SEALED, __ATOMIC_ACQ_REL) & ~SEALED;

	for (int i = 0; i < 1000 && __atomic_load_n(&w->committed, __ATOMIC_ACQUIRE) != end; i++)
		sched_yield();
	end = __atomic_load_n(&w->committed, __ATOMIC_ACQUIRE);
	w->sealed_at = end;
	return end;
}

/*
 * After a seal: write the feature table (table, tlen bytes) and bodies (blob,
 * len bytes), laid out for the offset the seal returned, and the final header
 * with the feature bits, then close the file. Returns 0 or -errno.
 * Async-signal-safe.
 */
int writer__finish_with(struct writer *w, const void *table, size_t tlen, const void *blob,
			size_t len, const uint64_t *bits)
{
	uint64_t end = w->sealed_at;
	int err;

	if (w->fd < 0)
		return -EBADF;
	err = __atomic_load_n(&w->error, __ATOMIC_RELAXED) ? -w->error : 0;
	if (!err && tlen)
		err = pwrite_all(w->fd, table, tlen, end);
	if (!err && len)
		err = pwrite_all(w->fd, blob, len, end + tlen);
	if (!err)
		err = write_header(w, end - w->data_offset, tlen ? bits : NULL);
	else
		write_header(w, end - w->data_offset, NULL);
	if (ap_close(w->fd) < 0 && !err)
		err = -errno;
	w->fd = -1;
	return err;
}

/* Finish without features (a file whose features could not be laid out). */
int writer__finish(struct writer *w, const void *blob, size_t len, const uint64_t *bits)
{
	if (!(__atomic_load_n(&w->reserved, __ATOMIC_ACQUIRE) & SEALED))
		writer__seal(w);
	return writer__finish_with(w, NULL, 0, blob, len, bits);
}

/* Close the file as it is (a forked child dropping its parent's writer). */
void writer__abandon(struct writer *w)
{
	if (w->fd >= 0)
		ap_close(w->fd);
	w->fd = -1;
}

/*
 * Open a finished file again to append more data (an exec that failed):
 * the features are cut off and the header says "no features" until the next
 * finish. Returns 0 or -errno. Not async-signal-safe.
 */
int writer__reopen(struct writer *w)
{
	int fd = open(w->path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	w->fd = ap_move_high(fd, true);
	if (ftruncate(w->fd, (off_t)w->sealed_at) < 0 ||
	    write_header(w, w->sealed_at - w->data_offset, NULL)) {
		ap_close(w->fd);
		w->fd = -1;
		return -EIO;
	}
	w->error = 0;
	__atomic_store_n(&w->committed, w->sealed_at, __ATOMIC_RELEASE);
	__atomic_store_n(&w->reserved, w->sealed_at, __ATOMIC_RELEASE);
	return 0;
}

/* Write events[i]'s attr again (its period, learned at the end). Not async-signal-safe. */
int writer__update_attr(struct writer *w, int i)
{
	if (w->fd < 0 || i < 0 || i >= w->nr_events)
		return -EINVAL;
	return write_attr(w, i);
}
