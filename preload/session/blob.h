/* SPDX-License-Identifier: MIT */
/*
 * blob.h - a growing byte buffer for the feature sections (file_features.c,
 * file_machine.c), with perf's string encoding. Its memory is the library's
 * own (handler/pages.h), never libc's heap: the features are laid out in a
 * forked child and before exec or _exit, which a program may call from a
 * signal handler that interrupted malloc. Async-signal-safe, but not
 * reentrant (one blob is grown by one caller at a time).
 */
#ifndef AUTOPROF_SESSION_BLOB_H
#define AUTOPROF_SESSION_BLOB_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "handler/pages.h"
#include "internal.h"

struct blob {
	char *p;
	size_t len, cap;
	int err;
};

/* n more zeroed bytes at the end; NULL (and b->err) when out of memory, or
 * when n is 0 and b has no memory yet (a feature of no bytes: a machine that
 * says nothing there, as a cached one read back may). */
static inline void *blob_grow(struct blob *b, size_t n)
{
	if (b->err || (!n && !b->p))
		return NULL;
	if (b->len + n > b->cap) {
		/* a page to start (the unit of pages__alloc), then doubling */
		size_t cap = b->cap ? b->cap * 2 : 64;
		char *p;

		while (cap < b->len + n)
			cap *= 2;
		p = pages__realloc(b->p, cap);
		if (!p) {
			b->err = -ENOMEM;
			return NULL;
		}
		b->p = p;
		b->cap = pages__size(p);
	}
	memset(b->p + b->len, 0, n);
	b->len += n;
	return b->p + b->len - n;
}

/* Give b's memory back and empty it. Async-signal-safe. */
static inline void blob_free(struct blob *b)
{
	pages__free(b->p);
	memset(b, 0, sizeof(*b));
}

static inline void blob_put(struct blob *b, const void *data, size_t n)
{
	void *p = blob_grow(b, n);

	if (p)
		memcpy(p, data, n);
}

static inline void blob_u32(struct blob *b, uint32_t v)
{
	blob_put(b, &v, sizeof(v));
}

static inline void blob_u64(struct blob *b, uint64_t v)
{
	blob_put(b, &v, sizeof(v));
}

/* perf's string: u32 length rounded up to 64, then the zero-padded bytes. */
static inline void blob_string(struct blob *b, const char *s)
{
	size_t n = strlen(s) + 1;
	uint32_t len =
	    (uint32_t)((n + PERF_FILE_NAME_ALIGN - 1) & ~(size_t)(PERF_FILE_NAME_ALIGN - 1));
	char *p;

	blob_u32(b, len);
	p = blob_grow(b, len);
	if (p)
		memcpy(p, s, n);
}

/*
 * A HEADER_BUILD_ID entry (the build ids feature): the @size bytes (at most
 * 20) of build id @id of the file @path, on the host machine (pid -1, as perf
 * writes it).
 */
static inline void blob_build_id(struct blob *b, const char *path, const void *id, size_t size)
{
	size_t fname = PERF_ALIGN8(strlen(path) + 1);
	struct perf_record_build_id rec;
	char *dst;

	memset(&rec, 0, sizeof(rec));
	rec.header.type = PERF_RECORD_HEADER_BUILD_ID;
	rec.header.misc = PERF_RECORD_MISC_USER | PERF_RECORD_MISC_BUILD_ID_SIZE;
	rec.header.size = (uint16_t)(sizeof(rec) + fname);
	rec.pid = -1;
	memcpy(rec.build_id, id, size);
	rec.build_id[20] = (uint8_t)size;
	blob_put(b, &rec, sizeof(rec));
	dst = blob_grow(b, fname);
	if (dst)
		memcpy(dst, path, strlen(path));
}

/* ---- file_host.c: the host's features, the same in both writers ---- */

/*
 * Append the body of feature @feat to @b when it is one of the host's (host
 * name, OS release, version, architecture, total memory, CLOCKID,
 * CLOCK_DATA): true; false (nothing appended) for any other.
 */
bool file_host__feature(int feat, struct blob *b);

/* The bodies of NRCPUS and CPUDESC, the same for a boot: file_machine.c keeps them with the
 * machine's description for the next images. True. */
bool file_host__nrcpus(struct blob *b);
bool file_host__cpudesc(struct blob *b);

/* ---- file_machine.c: the machine's description, as perf record writes it ---- */

bool file_machine__feature(int feat, struct blob *b, size_t max_len);
void file_machine__keep(void);

/* The features a perf.data of ours carries, in bit order as perf lays them out:
 * what perf record writes, and the clock. Both writers (the library's, the
 * launcher's outside mode) use this one list. */
#define MACHINE_NR_FEATURES 22
extern const int file_machine__feature_order[MACHINE_NR_FEATURES];

#endif /* AUTOPROF_SESSION_BLOB_H */
