// SPDX-License-Identifier: MIT
/*
 * perf_file.c - map a perf.data file, validate its header, attrs and ids,
 * and walk its records.
 *
 * Every offset and size read from the file is checked against the mapping
 * before it is used, so a truncated or hostile file gives an error message
 * in pf->err, never an access outside the file.
 */
#include "read/read.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The room for what perf_file__fail() and perf_file__warn() say. */
#define PERF_FILE_MSG 256
/* Files from this size on are read ahead (MADV_SEQUENTIAL). */
#define SEQUENTIAL_MIN (1u << 20)
/*
 * The record walker hands the pages it has passed back to the kernel every
 * this many bytes, so a big file costs a window of memory, not its size.
 */
#define RELEASE_CHUNK (2ULL << 20)
#define PREFETCH_MAX  1024 /* see prefetch_next() */

/* "PERFFILE": the version 1 format, which perf itself no longer writes. */
#define PERF_FILE_MAGIC_V1 0x454c494646524550ULL

/* Say what is wrong with pf in pf->err; returns err. */
int perf_file__fail(struct perf_file *pf, int err, const char *fmt, ...)
{
	va_list ap;

	if (!pf->err)
		pf->err = malloc(PERF_FILE_MSG);
	va_start(ap, fmt);
	if (pf->err)
		vsnprintf(pf->err, PERF_FILE_MSG, fmt, ap);
	va_end(ap);
	return err;
}

void perf_file__warn(struct perf_file *pf, const char *fmt, ...)
{
	va_list ap;

	if (!pf->warn)
		pf->warn = malloc(PERF_FILE_MSG);
	va_start(ap, fmt);
	if (pf->warn)
		vsnprintf(pf->warn, PERF_FILE_MSG, fmt, ap);
	va_end(ap);
}

const char *perf_file__error(const struct perf_file *pf)
{
	return pf->err ? pf->err : "out of memory";
}

const char *perf_file__warning(const struct perf_file *pf)
{
	return pf->warn ? pf->warn : "";
}

/* True if [off, off + len) lies inside the file. */
static bool in_file(const struct perf_file *pf, u64 off, u64 len)
{
	return off <= pf->size && len <= pf->size - off;
}

static bool overlap(u64 a_off, u64 a_len, u64 b_off, u64 b_len)
{
	return a_len && b_len && a_off < b_off + b_len && b_off < a_off + a_len;
}

static int map_file(struct perf_file *pf, const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int err = 0;

	if (fd < 0)
		return perf_file__fail(pf, -errno, "%s", strerror(errno));
	if (fstat(fd, &st) < 0) {
		err = perf_file__fail(pf, -errno, "%s", strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		err = perf_file__fail(pf, -EINVAL, "not a regular file");
		goto out;
	}
	if (st.st_size == 0) {
		err = perf_file__fail(pf, -EINVAL, "empty file");
		goto out;
	}
	pf->size = (size_t)st.st_size;
	pf->base = mmap(NULL, pf->size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (pf->base == MAP_FAILED) {
		pf->base = NULL;
		err = perf_file__fail(pf, -errno, "mmap: %s", strerror(errno));
	} else {
		pf->mapped = true;
		if (pf->size >= SEQUENTIAL_MIN) /* a window's few KB: no read-ahead to ask for */
			madvise((void *)pf->base, pf->size, MADV_SEQUENTIAL);
	}
out:
	close(fd);
	return err;
}

/*
 * Read standard input to its end into pf->heap: a pipe cannot be mapped.
 * The whole stream is held in memory (then expanded, see stream.c).
 */
static int read_stdin(struct perf_file *pf)
{
	size_t cap = 0;

	for (;;) {
		ssize_t n;

		if (array__reserve(&pf->heap, &cap, pf->size + (1 << 20), 1))
			return perf_file__fail(pf, -ENOMEM, "out of memory reading standard input");
		n = read(STDIN_FILENO, pf->heap + pf->size, cap - pf->size);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return perf_file__fail(pf, -errno, "%s", strerror(errno));
		if (n == 0)
			break;
		pf->size += (size_t)n;
	}
	if (!pf->size)
		return perf_file__fail(pf, -EINVAL, "empty input");
	pf->base = pf->heap;
	return 0;
}

static int check_header(struct perf_file *pf)
{
	const struct perf_file_header *h = &pf->hdr;

	if (pf->size < 8)
		return perf_file__fail(pf, -EINVAL, "too small for a perf.data file (%zu bytes)",
				       pf->size);
	memcpy(&pf->hdr.magic, pf->base, 8);
	if (h->magic == PERF_FILE_MAGIC_SWAPPED)
		return perf_file__fail(pf, -EINVAL, "foreign byte order is not supported");
	if (h->magic == PERF_FILE_MAGIC_V1)
		return perf_file__fail(pf, -EINVAL,
				       "version 1 perf.data (PERFFILE) is not supported");
	if (h->magic != PERF_FILE_MAGIC)
		return perf_file__fail(pf, -EINVAL, "not a perf.data file (bad magic)");
	if (pf->size >= sizeof(struct perf_pipe_file_header) &&
	    ld64(pf->base + 8) == sizeof(struct perf_pipe_file_header)) {
		pf->pipe = true;
		pf->hdr.size = sizeof(struct perf_pipe_file_header);
		return 0;
	}
	if (pf->size < sizeof(*h))
		return perf_file__fail(pf, -EINVAL, "truncated header (%zu bytes)", pf->size);
	memcpy(&pf->hdr, pf->base, sizeof(*h));
	if (h->size != sizeof(*h))
		return perf_file__fail(pf, -EINVAL, "header size is %llu, expected %zu",
				       (unsigned long long)h->size, sizeof(*h));
	if (h->attr_size < 64 + sizeof(struct perf_file_section))
		return perf_file__fail(pf, -EINVAL, "attr size %llu is too small",
				       (unsigned long long)h->attr_size);
	if (!in_file(pf, h->attrs.offset, h->attrs.size))
		return perf_file__fail(
		    pf, -EINVAL, "attrs section (offset %llu, size %llu) is outside the file",
		    (unsigned long long)h->attrs.offset, (unsigned long long)h->attrs.size);
	if (h->attrs.size < h->attr_size)
		return perf_file__fail(pf, -EINVAL, "no event attributes (attrs size %llu)",
				       (unsigned long long)h->attrs.size);
	if (h->attrs.offset < h->size)
		return perf_file__fail(pf, -EINVAL, "attrs section overlaps the header");
	if (h->data.offset < h->size)
		return perf_file__fail(pf, -EINVAL, "data section overlaps the header");
	if (h->data.offset > pf->size)
		return perf_file__fail(pf, -EINVAL,
				       "data offset %llu is past the end of the file (%zu bytes)",
				       (unsigned long long)h->data.offset, pf->size);
	return 0;
}

/*
 * Settle the record stream's extent. A writer killed before it patched the
 * header leaves data.size 0 (or stale); then everything up to the end of the
 * file (or up to the attrs, if they follow the data) is taken as records.
 */
static int check_data(struct perf_file *pf)
{
	const struct perf_file_header *h = &pf->hdr;
	u64 end = pf->size;

	pf->data_off = h->data.offset;
	if (h->data.size && in_file(pf, h->data.offset, h->data.size)) {
		pf->data_end = h->data.offset + h->data.size;
	} else {
		if (h->attrs.offset >= h->data.offset && h->attrs.offset < end)
			end = h->attrs.offset;
		pf->data_end = end;
		pf->data_repaired = true;
		perf_file__warn(pf, "data size in header is %llu, using %llu",
				(unsigned long long)h->data.size,
				(unsigned long long)(pf->data_end - pf->data_off));
	}
	if (overlap(h->attrs.offset, h->attrs.size, pf->data_off, pf->data_end - pf->data_off))
		return perf_file__fail(pf, -EINVAL, "attrs and data sections overlap");
	pf->walk_end = pf->data_end;
	return 0;
}

/* Offset of the id within a SAMPLE payload in u64s, or -1 when it has none. */
static int calc_id_pos(u64 type)
{
	int pos = 0;

	if (type & PERF_SAMPLE_IDENTIFIER)
		return 0;
	if (!(type & PERF_SAMPLE_ID))
		return -1;
	pos += !!(type & PERF_SAMPLE_IP);
	pos += !!(type & PERF_SAMPLE_TID);
	pos += !!(type & PERF_SAMPLE_TIME);
	pos += !!(type & PERF_SAMPLE_ADDR);
	return pos;
}

/*
 * Append an attr of @size bytes at @attr (size already checked against its
 * container) with its @nr_ids u64 ids at @ids to pf->attrs and pf->ids.
 */
int perf_file__add_attr(struct perf_file *pf, const u8 *attr, u32 size, const u8 *ids, u64 nr_ids)
{
	struct evattr *ea;
	size_t i = pf->nr_attrs;
	u64 j;

	if (array__reserve(&pf->attrs, &pf->cap_attrs, i + 1, sizeof(*pf->attrs)))
		return perf_file__fail(pf, -ENOMEM, "out of memory");
	ea = &pf->attrs[i];
	memset(ea, 0, sizeof(*ea));
	pf->nr_attrs++;
	memcpy(&ea->attr, attr, size < sizeof(ea->attr) ? size : sizeof(ea->attr));
	ea->attr.size = size;
	if (!ea->attr.freq && ea->attr.sample_period)
		ea->default_period = ea->attr.sample_period;
	else
		ea->default_period = 1;
	for (j = 0; j < nr_ids; j++) {
		int err = kvmap__put(&pf->ids, ld64(ids + j * 8), 0, i);

		if (err)
			return perf_file__fail(pf, err, "out of memory");
	}
	return 0;
}

static int read_attr(struct perf_file *pf, size_t i)
{
	const struct perf_file_header *h = &pf->hdr;
	const u8 *entry = pf->base + h->attrs.offset + i * h->attr_size;
	u64 attr_bytes = h->attr_size - sizeof(struct perf_file_section);
	struct perf_file_section ids;
	u32 size = ld32(entry + 4);

	if (size == 0)
		size = 64;
	if (size < 64 || size > attr_bytes)
		return perf_file__fail(pf, -EINVAL,
				       "attr %zu: size %u does not fit its %llu-byte entry", i,
				       size, (unsigned long long)attr_bytes);
	memcpy(&ids, entry + attr_bytes, sizeof(ids));
	if (!in_file(pf, ids.offset, ids.size))
		return perf_file__fail(
		    pf, -EINVAL, "attr %zu: ids (offset %llu, size %llu) are outside the file", i,
		    (unsigned long long)ids.offset, (unsigned long long)ids.size);
	return perf_file__add_attr(pf, entry, size, pf->base + ids.offset, ids.size / 8);
}

/*
 * Settle where the id is once all attrs are known. Returns 0, or -EINVAL if
 * there are none or they disagree (then no record could be told apart).
 */
int perf_file__finish_attrs(struct perf_file *pf)
{
	struct evattr *fit;
	size_t i;

	if (!pf->nr_attrs)
		return perf_file__fail(pf, -EINVAL, "no event attributes (HEADER_ATTR records)");
	/* room for 16 no longer: a day of windows keeps thousands of files open */
	fit = pf->cap_attrs > pf->nr_attrs ? realloc(pf->attrs, pf->nr_attrs * sizeof(*fit)) : NULL;
	if (fit) {
		pf->attrs = fit;
		pf->cap_attrs = pf->nr_attrs;
	}
	/* Which attr a record belongs to is only decidable if they agree on where the id is. */
	pf->id_pos = calc_id_pos(pf->attrs[0].attr.sample_type);
	pf->sample_id_all = pf->attrs[0].attr.sample_id_all;
	for (i = 1; i < pf->nr_attrs; i++) {
		if (calc_id_pos(pf->attrs[i].attr.sample_type) != pf->id_pos)
			return perf_file__fail(
			    pf, -EINVAL, "attrs 0 and %zu disagree on the sample id position", i);
		if (pf->attrs[i].attr.sample_id_all != pf->sample_id_all)
			return perf_file__fail(pf, -EINVAL,
					       "attrs 0 and %zu disagree on sample_id_all", i);
	}
	return 0;
}

static int read_attrs(struct perf_file *pf)
{
	size_t i, nr = pf->hdr.attrs.size / pf->hdr.attr_size;
	int err;

	for (i = 0; i < nr; i++) {
		err = read_attr(pf, i);
		if (err)
			return err;
	}
	return perf_file__finish_attrs(pf);
}

/*
 * A pipe-mode stream lives in pf->expanded once expanded: give back the
 * input's copy (standard input) or mapping, so it is not held twice.
 */
static void release_input(struct perf_file *pf)
{
	if (pf->rbase == pf->base)
		return;
	if (pf->mapped)
		munmap((void *)pf->base, pf->size);
	free(pf->heap);
	pf->heap = NULL;
	pf->mapped = false;
	pf->base = NULL;
}

/*
 * Check the header and data section, then read the attrs; a pipe-mode stream
 * is expanded whole (stream.c), its attrs taken from its records. Returns 0
 * or -errno (said).
 */
static int validate(struct perf_file *pf)
{
	int err;

	pf->rbase = pf->base;
	err = check_header(pf);
	if (!err && pf->pipe) {
		err = stream__expand(pf, sizeof(struct perf_pipe_file_header), pf->size);
		if (!err)
			release_input(pf);
		return err ? err : perf_file__finish_attrs(pf);
	}
	if (!err)
		err = check_data(pf);
	if (!err)
		err = read_attrs(pf);
	if (!err)
		prefault__start(pf);
	return err;
}

/*
 * Map and validate the file at @path. On success the header, attrs and id map
 * are ready and pf->warn may hold a recoverable problem. On failure returns
 * -errno with the reason in pf->err; perf_file__close() must still be called.
 */
int perf_file__open(struct perf_file *pf, const char *path)
{
	int err;

	memset(pf, 0, sizeof(*pf));
	pf->path = strdup(path);
	if (!pf->path)
		return perf_file__fail(pf, -ENOMEM, "out of memory");
	err = strcmp(path, "-") ? map_file(pf, path) : read_stdin(pf);
	return err ? err : validate(pf);
}

/*
 * As perf_file__open(), for the @len bytes at @buf, named @name in messages.
 * The buffer is borrowed: it must outlive the file (the fuzz target's path).
 */
int perf_file__open_mem(struct perf_file *pf, const char *name, const void *buf, size_t len)
{
	memset(pf, 0, sizeof(*pf));
	pf->path = strdup(name);
	if (!pf->path)
		return perf_file__fail(pf, -ENOMEM, "out of memory");
	if (!len)
		return perf_file__fail(pf, -EINVAL, "empty file");
	pf->base = buf;
	pf->size = len;
	return validate(pf);
}

void perf_file__close(struct perf_file *pf)
{
	size_t i;

	prefault__stop(pf); /* before the mapping goes */
	if (pf->base && pf->mapped)
		munmap((void *)pf->base, pf->size);
	free(pf->heap);
	free(pf->expanded);
	for (i = 0; i < pf->nr_attrs; i++)
		free(pf->attrs[i].name);
	free(pf->attrs);
	kvmap__exit(&pf->ids);
	features__exit(&pf->feat);
	free(pf->path);
	free(pf->warn);
	free(pf->err);
	memset(pf, 0, sizeof(*pf));
}

/* Fill @r with the record at @pos if it lies whole inside the walked data. */
int perf_file__record_at(const struct perf_file *pf, u64 pos, struct record *r)
{
	if (pos < pf->data_off || pos >= pf->walk_end || pf->walk_end - pos < sizeof(r->h))
		return -EINVAL;
	memcpy(&r->h, pf->rbase + pos, sizeof(r->h));
	if (r->h.size < sizeof(r->h) || r->h.size > pf->walk_end - pos)
		return -EINVAL;
	r->p = pf->rbase + pos;
	r->off = pos;
	return 0;
}

void perf_file__release(struct perf_file *pf)
{
	if (!pf->mapped || pf->rbase != pf->base || pf->prefault)
		return;
	madvise((void *)pf->base, pf->size, MADV_DONTNEED);
	pf->released = 0;
}

/*
 * Drop the mapped pages before @pos once a chunk has been walked. They are
 * read-only file pages: touching them again just reads them back. The
 * prefault thread, when there is one, does this on its CPU (prefault.c).
 */
static void release_behind(struct perf_file *pf, u64 pos)
{
	static u64 page;
	u64 end;

	if (!pf->mapped || pf->rbase != pf->base || pf->prefault)
		return;
	if (!page)
		page = (u64)sysconf(_SC_PAGESIZE);
	if (pos < pf->released) /* a new walk */
		pf->released = pos & ~(page - 1);
	if (pos - pf->released < RELEASE_CHUNK)
		return;
	end = pos & ~(page - 1);
	madvise((void *)(pf->base + pf->released), end - pf->released, MADV_DONTNEED);
	pf->released = end;
}

/*
 * Ask the CPU for the start of the record after @r (at @next) while @r is
 * read: up to the size of @r (records of a file are mostly alike), at most
 * PREFETCH_MAX bytes, and the last line of @r. A --call-graph dwarf sample's
 * registers and the top of its stack dump, where the unwinder reads, come
 * from page cache memory the CPU has never seen: without this each of those
 * reads waits for DRAM (half the reader's user time on such a file). A
 * prefetch never faults; pages not yet mapped are simply not fetched.
 * Always inlined: GCC drops the calls of a static function that does
 * nothing but prefetch, as if it had no effect.
 */
static inline void __attribute__((always_inline))
prefetch_next(const struct perf_file *pf, const struct record *r, u64 next)
{
	u64 len = r->h.size, off;

	if (len > PREFETCH_MAX)
		len = PREFETCH_MAX;
	if (len > pf->walk_end - next)
		len = pf->walk_end - next;
	__builtin_prefetch(pf->rbase + next - 8);
	for (off = 0; off < len; off += 64)
		__builtin_prefetch(pf->rbase + next + off);
}

/*
 * Step to the record at *pos and advance *pos past it. Returns 1 with @r
 * filled, 0 at the end of the data, or -EINVAL on a record that is too small
 * or runs past the end: then walking stops there for good (pf->walk_end) and
 * pf->err says where.
 */
int perf_file__next_record(struct perf_file *pf, u64 *pos, struct record *r)
{
	u64 left;

	if (*pos >= pf->walk_end)
		return 0;
	release_behind(pf, *pos);
	if (pf->prefault)
		prefault__tell(pf->prefault, *pos);
	if (perf_file__record_at(pf, *pos, r) == 0) {
		*pos += r->h.size;
		/* file mode: AUX data follows its AUXTRACE record (an expanded stream dropped it)
		 */
		if (__builtin_expect(r->h.type == PERF_RECORD_AUXTRACE, 0) && !pf->expanded) {
			u64 extra = perf_file__trailing(r);

			if (extra > pf->walk_end - *pos) {
				perf_file__fail(pf, -EINVAL,
						"AUXTRACE record at offset %llu: its %llu bytes of "
						"trace data run past the end, stopping there",
						(unsigned long long)r->off,
						(unsigned long long)extra);
				pf->stop_at = r->off;
				pf->walk_end = r->off;
				return -EINVAL;
			}
			*pos += extra;
		}
		prefetch_next(pf, r, *pos);
		return 1;
	}
	left = pf->walk_end - *pos;
	if (left < sizeof(r->h))
		perf_file__fail(pf, -EINVAL,
				"truncated record at offset %llu (%llu bytes left), stopping there",
				(unsigned long long)*pos, (unsigned long long)left);
	else
		perf_file__fail(
		    pf, -EINVAL,
		    "bad record at offset %llu (type %u, size %u, %llu bytes left), stopping there",
		    (unsigned long long)*pos, r->h.type, r->h.size, (unsigned long long)left);
	if (!pf->expanded)
		pf->stop_at = *pos;
	pf->walk_end = *pos;
	return -EINVAL;
}

u64 perf_file__trailing(const struct record *r)
{
	/* TRACING_DATA: perf 4.9 and older wrote a 12-byte record (no pad word) */
	if (r->h.type == PERF_RECORD_HEADER_TRACING_DATA && r->h.size >= 12)
		return PERF_ALIGN8((u64)ld32(r->p + 8));
	if (r->h.type == PERF_RECORD_AUXTRACE && r->h.size >= sizeof(struct perf_record_auxtrace))
		return ld64(r->p + 8);
	return 0;
}

/* Attr index for an event id: the only attr, the first for id 0, else -ENOENT if unknown. */
int perf_file__attr_of_id(const struct perf_file *pf, u64 id)
{
	u64 idx;

	if (pf->nr_attrs == 1 || id == 0)
		return 0;
	if (kvmap__get(&pf->ids, id, 0, &idx))
		return (int)idx;
	return -ENOENT;
}

bool perf_file__has_magic(const char *path)
{
	u64 magic = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	bool yes;

	if (fd < 0)
		return false;
	yes = read(fd, &magic, sizeof(magic)) == sizeof(magic) &&
	      (magic == PERF_FILE_MAGIC || magic == PERF_FILE_MAGIC_SWAPPED ||
	       magic == 0x454c494646524550ULL /* PERFFILE, version 1 */);
	close(fd);
	return yes;
}
