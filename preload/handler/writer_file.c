/* SPDX-License-Identifier: MIT */
/*
 * writer_file.c - the making of the writer's file (writer.c): its header,
 * its attrs with their ids, each commit of data with the features after it,
 * and its creation, at once, at a window's start or, for a deferred writer,
 * at its first append (then with the records staged before it): a finished
 * profile before it has its name.
 * Everything here uses raw system calls: async-signal-safe, no
 * cancellation point.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "writer_parts.h"

#define IDS_OFFSET	sizeof(struct perf_file_header)
#define ATTRS_OFFSET(n) (IDS_OFFSET + (n) * sizeof(uint64_t))
#define DATA_OFFSET(n)	PERF_ALIGN8(ATTRS_OFFSET(n) + (n) * sizeof(struct perf_file_attr))
#define SIZE_AT		offsetof(struct perf_file_header, data.size)
#define BITS_AT		offsetof(struct perf_file_header, adds_features)

/*
 * pwritev until done; -EFBIG, nothing written, past the program's
 * RLIMIT_FSIZE (raw_syscall__fits_fsize). Returns 0 or -errno. Async-signal-safe
 * (no cancellation point).
 */
int writer_file__pwritev_all(int fd, struct iovec *iov, int n, uint64_t off)
{
	uint64_t end = off;

	for (int i = 0; i < n; i++)
		end += iov[i].iov_len;
	if (!raw_syscall__fits_fsize(end))
		return -EFBIG;
	return writer_file__pwritev_fitted(fd, iov, n, off);
}

int writer_file__pwritev_fitted(int fd, struct iovec *iov, int n, uint64_t off)
{
	while (n > 0) {
		long r = raw_syscall(SYS_pwritev, fd, iov, n, (long)off, 0L);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		off += (uint64_t)r;
		while (n > 0 && (size_t)r >= iov->iov_len) {
			r -= (long)iov->iov_len;
			iov++;
			n--;
		}
		if (n > 0) {
			iov->iov_base = (char *)iov->iov_base + r;
			iov->iov_len -= (size_t)r;
		}
	}
	return 0;
}

/* pwrite until done. Returns 0 or -errno. Async-signal-safe. */
int writer_file__pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
{
	struct iovec iov = {(void *)buf, len};

	return len ? writer_file__pwritev_all(fd, &iov, 1, off) : 0;
}

/* Write the whole header (a new file). Returns 0 or -errno. */
static int write_header(struct writer *w, uint64_t data_size, const uint64_t *bits)
{
	struct perf_file_header h = {
	    .magic = PERF_FILE_MAGIC,
	    .size = sizeof(h),
	    .attr_size = sizeof(struct perf_file_attr),
	    .attrs = {ATTRS_OFFSET(w->nr_events), w->nr_events * sizeof(struct perf_file_attr)},
	    .data = {w->data_offset, data_size},
	};

	if (bits)
		memcpy(h.adds_features, bits, sizeof(h.adds_features));
	return writer_file__pwrite_all(w->fd, &h, sizeof(h), 0);
}

/* Write events[i]'s attr and the offset of its id. Returns 0 or -errno. */
int writer_file__write_attr(struct writer *w, int i)
{
	struct perf_file_attr fa;

	memset(&fa, 0, sizeof(fa));
	memcpy(fa.attr, &w->events[i].attr, PERF_FILE_ATTR_SIZE);
	fa.ids.offset = IDS_OFFSET + (uint64_t)i * sizeof(uint64_t);
	fa.ids.size = sizeof(uint64_t);
	return writer_file__pwrite_all(w->fd, &fa, sizeof(fa),
				       ATTRS_OFFSET(w->nr_events) + (uint64_t)i * sizeof(fa));
}

/* Write the header, and each attr with its id (a new file). 0 or -errno. Async-signal-safe. */
int writer_file__write_head(struct writer *w)
{
	int err = write_header(w, 0, NULL);

	for (int i = 0; i < w->nr_events && !err; i++) {
		err = writer_file__pwrite_all(w->fd, &w->events[i].id, sizeof(w->events[i].id),
					      IDS_OFFSET + (uint64_t)i * sizeof(uint64_t));
		if (!err)
			err = writer_file__write_attr(w, i);
	}
	return err;
}

/*
 * Under the lock: write len bytes of data at the end, the features after
 * them, and the header (the three writes at the top of writer.c).
 * Async-signal-safe.
 */
int writer_file__commit(struct writer *w, const void *buf, size_t len)
{
	const struct writer_features *f = w->feat;
	struct perf_file_section table[AP_MAX_FEATURES];
	uint64_t times[2], base = w->end + len, end;
	struct {
		uint64_t size;
		struct perf_file_section event_types;
		uint64_t bits[PERF_FEAT_BITS / 64];
	} tail;
	struct iovec iov[5];
	int n = 0, err;

	_Static_assert(sizeof(tail) == sizeof(struct perf_file_header) - SIZE_AT, "header tail");
	if (len)
		iov[n++] = (struct iovec){(void *)buf, len};
	if (f) {
		size_t tlen = (size_t)f->n * sizeof(table[0]), st = f->sample_time;

		for (int i = 0; i < f->n; i++) {
			table[i].offset = base + tlen + f->rel[i];
			table[i].size = f->size[i];
		}
		iov[n++] = (struct iovec){table, tlen};
		if (st == SIZE_MAX || st + sizeof(times) > f->len) {
			iov[n++] = (struct iovec){f->body, f->len};
		} else {
			times[0] = __atomic_load_n(&w->first_time, __ATOMIC_RELAXED);
			times[1] = __atomic_load_n(&w->last_time, __ATOMIC_RELAXED);
			iov[n++] = (struct iovec){f->body, st};
			iov[n++] = (struct iovec){times, sizeof(times)};
			iov[n++] = (struct iovec){f->body + st + sizeof(times),
						  f->len - st - sizeof(times)};
		}
	}
	end = w->end;
	for (int i = 0; i < n; i++)
		end += iov[i].iov_len;
	/* past RLIMIT_FSIZE nothing is written, checked once before anything: the features on
	 * disk stay, and so must the header's bits that point to them (perf names the events
	 * from them) */
	if (!raw_syscall__fits_fsize(end))
		return -EFBIG;
	if (w->tail_on_disk) {
		memset(tail.bits, 0, sizeof(tail.bits));
		err = writer_file__pwrite_all(w->fd, tail.bits, sizeof(tail.bits), BITS_AT);
		if (err)
			return err;
		w->tail_on_disk = false;
	}
	err = writer_file__pwritev_fitted(w->fd, iov, n, w->end);
	if (err)
		return err;
	w->end = base;
	memset(&tail, 0, sizeof(tail));
	tail.size = w->end - w->data_offset;
	if (f)
		memcpy(tail.bits, f->bits, sizeof(tail.bits));
	err = writer_file__pwrite_all(w->fd, &tail, sizeof(tail), SIZE_AT);
	if (!err)
		w->tail_on_disk = f != NULL;
	return err;
}

/*
 * On w->fd, a new file: its head, its first records and the features, then
 * its name when it was made without one (writer_fd.c). 0 or -errno.
 */
static int op_make(struct writer *w, void *arg)
{
	const struct chunk *f = arg;
	int err;

	w->end = w->data_offset;
	w->tail_on_disk = false;
	err = writer_file__write_head(w);
	if (!err)
		err = writer_file__commit(w, f->buf, f->len);
	return err ? err : writer_fd__name(w);
}

/*
 * Under the lock, on w->fd: a making that the finish took over (this thread's
 * deadly signal interrupted it) done again, with the records staged (those of
 * the interrupted append are lost), named. 0 or -errno. Async-signal-safe.
 */
int writer_file__make_again(struct writer *w)
{
	struct chunk f = {w->staged, w->staged_len};
	int err = op_make(w, &f);

	w->making = false;
	return err;
}

/* writer_file__create's one try (w->making meanwhile). */
static int make(struct writer *w, struct chunk *f)
{
	int fd, err;

	w->dev = w->ino = 0;
	w->end = w->data_offset; /* before w->fd is set: a finish may take the making over */
	w->making = true;
	fd = writer_fd__make(w);
	if (fd == -EMFILE || fd == -ENFILE) {
		w->transient = true;
		err = writer_helper__run(w, op_make, f);
		w->making = false;
		if (err && w->ino && !w->unnamed) /* made, not written */
			raw_syscall(SYS_unlink, w->path);
		if (err)
			w->transient = false, w->dev = w->ino = 0;
		return err;
	}
	if (fd < 0) {
		w->making = false;
		return fd;
	}
	w->fd = fdtab__move_high(fd, true);
	err = op_make(w, f);
	w->making = false;
	if (err) {
		fdtab__close(w->fd);
		if (!w->unnamed)
			raw_syscall(SYS_unlink, w->path);
		w->fd = -1;
		w->dev = w->ino = 0;
	} else if (fdtab__costs(w->fd)) {
		w->transient = true; /* the program's numbers are all it may have */
		writer_fd__detach(w);
	}
	return err;
}

/*
 * Under the lock: make w->path's file (never through a symlink, never over
 * a file there) with its header and attrs, the len bytes of records at buf
 * and the features: whole before it has its name, where the file system and
 * /proc allow (writer_fd.c), so that no reader, and no end of the process,
 * ever finds it half made. Where the program holds every fd its limit
 * allows, a helper makes and writes it, and the writer is transient from
 * then on (writer_helper.c). Returns 0 or -errno. Async-signal-safe (raw
 * system calls: a deferred file is made by whichever append comes first, a
 * handler's too).
 */
int writer_file__create(struct writer *w, const void *buf, size_t len)
{
	struct chunk f = {buf, len};
	int err;

	w->deferred = false;
	err = make(w, &f);
	return err == -ENOLINK ? make(w, &f) : err; /* then made with its name */
}
