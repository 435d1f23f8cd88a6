// SPDX-License-Identifier: MIT
/*
 * stream.c - turn a pipe-mode stream, or a data section with
 * PERF_RECORD_COMPRESSED records, into one plain record stream in memory.
 *
 * The records are copied in order; the body of each COMPRESSED record is
 * decompressed in place of it with libzstd's streaming decoder (one
 * ZSTD_DStream for the whole file, as perf writes one frame per record and a
 * record may straddle two of them; libzstd is loaded with dlopen() at the
 * first such record, so that the many readers of plain files, the launcher
 * first, do not load it at every start). Pipe-mode header records (HEADER_ATTR,
 * HEADER_FEATURE, EVENT_UPDATE) are applied to @pf on the way; the payloads
 * that follow TRACING_DATA and AUXTRACE records outside their size are
 * skipped. The result is then walked by perf_file__next_record() like any
 * file's data, so every record goes through the same decoder.
 *
 * Memory: the expanded stream is held whole; it is bounded to
 * MAX_EXPAND_BASE + MAX_EXPAND_RATIO times the input, so a small hostile
 * input cannot expand without end.
 */
#include "read/read.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <zstd.h>

#define MAX_EXPAND_BASE	 (64ULL << 20)
#define MAX_EXPAND_RATIO 128ULL

/* The libzstd functions used, by their names. */
#define ZSTD_USED(X)                                                                               \
	X(ZSTD_createDStream)                                                                      \
	X(ZSTD_initDStream)                                                                        \
	X(ZSTD_DCtx_setParameter)                                                                  \
	X(ZSTD_decompressStream)                                                                   \
	X(ZSTD_DStreamOutSize)                                                                     \
	X(ZSTD_freeDStream)                                                                        \
	X(ZSTD_isError)                                                                            \
	X(ZSTD_getErrorName)

static struct {
#define ZSTD_MEMBER(fn) typeof(fn) *fn;
	ZSTD_USED(ZSTD_MEMBER)
#undef ZSTD_MEMBER
	char why[256]; /* why libzstd could not be loaded, or "" */
} zstd;

static void zstd_load_once(void)
{
	void *lib = dlopen("libzstd.so.1", RTLD_LAZY | RTLD_LOCAL);

	if (!lib) {
		snprintf(zstd.why, sizeof(zstd.why), "%s", dlerror());
		return;
	}
#define ZSTD_SYM(fn)                                                                               \
	if (!zstd.why[0] && !(zstd.fn = (typeof(zstd.fn))dlsym(lib, #fn)))                         \
		snprintf(zstd.why, sizeof(zstd.why), "libzstd.so.1 has no " #fn);
	ZSTD_USED(ZSTD_SYM)
#undef ZSTD_SYM
}

/* Load libzstd (once, thread-safe). Returns NULL, or why it could not be. */
static const char *zstd_load(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, zstd_load_once);
	return zstd.why[0] ? zstd.why : NULL;
}

struct out {
	u8 *v;
	size_t nr, cap, max;
};

/* Make room for @n more bytes in @o. Returns 0, -ENOMEM or -EFBIG (over o->max). */
static int out_room(struct out *o, size_t n)
{
	if (n > o->max - o->nr)
		return -EFBIG;
	return array__reserve(&o->v, &o->cap, o->nr + n, 1);
}

static int out_fail(struct perf_file *pf, int err, const struct out *o)
{
	if (err == -EFBIG)
		return perf_file__fail(
		    pf, -EINVAL,
		    "the records expand to more than %zu bytes (%llux the input): refused", o->max,
		    MAX_EXPAND_RATIO);
	return perf_file__fail(pf, -ENOMEM, "out of memory");
}

/*
 * Decompress one COMPRESSED body @p/@len onto @o, until the input is used up
 * and zstd has nothing more to flush. Returns 0 or -errno with pf->err set (perf_file__error()).
 */
static int decompress(struct perf_file *pf, ZSTD_DStream *zs, const u8 *p, size_t len,
		      struct out *o, u64 off)
{
	ZSTD_inBuffer in = {p, len, 0};
	bool full = false;

	while (in.pos < in.size || full) {
		size_t want = zstd.ZSTD_DStreamOutSize(), ret, in_was = in.pos;
		ZSTD_outBuffer ob;

		if (o->nr == o->max)
			return out_fail(pf, -EFBIG, o);
		if (want > o->max - o->nr)
			want = o->max - o->nr;
		if (array__reserve(&o->v, &o->cap, o->nr + want, 1))
			return perf_file__fail(pf, -ENOMEM, "out of memory");
		ob = (ZSTD_outBuffer){o->v + o->nr, want, 0};
		ret = zstd.ZSTD_decompressStream(zs, &ob, &in);
		if (zstd.ZSTD_isError(ret))
			return perf_file__fail(
			    pf, -EINVAL, "COMPRESSED record at offset %llu: zstd: %s",
			    (unsigned long long)off, zstd.ZSTD_getErrorName(ret));
		o->nr += ob.pos;
		full = ob.pos == ob.size;
		if (!ob.pos && in.pos == in_was)
			break; /* no progress: zstd wants more input than there is */
	}
	return 0;
}

/* Pipe mode: HEADER_ATTR, the attr and its ids. */
static int header_attr(struct perf_file *pf, const struct record *r)
{
	const u8 *attr = r->p + sizeof(struct perf_record_header_attr);
	size_t body = r->h.size - sizeof(struct perf_record_header_attr);
	u32 size;

	if (body < 8)
		return perf_file__fail(pf, -EINVAL, "HEADER_ATTR at offset %llu is too short",
				       (unsigned long long)r->off);
	size = ld32(attr + 4);
	if (size == 0)
		size = 64;
	if (size < 64 || size > body)
		return perf_file__fail(pf, -EINVAL,
				       "HEADER_ATTR at offset %llu: attr size %u in %zu bytes",
				       (unsigned long long)r->off, size, body);
	return perf_file__add_attr(pf, attr, size, attr + size, (body - size) / 8);
}

/* Pipe mode: EVENT_UPDATE of type NAME names the attr of its id. */
static int event_update(struct perf_file *pf, const struct record *r)
{
	const size_t fixed = sizeof(struct perf_record_event_update);
	const char *name = (const char *)r->p + fixed;
	int attr;

	if (r->h.size <= fixed || ld64(r->p + 8) != PERF_EVENT_UPDATE_NAME)
		return 0;
	attr = perf_file__attr_of_id(pf, ld64(r->p + 16));
	if (attr < 0 || (size_t)attr >= pf->nr_attrs || pf->attrs[attr].name ||
	    !strnlen(name, r->h.size - fixed))
		return 0;
	pf->attrs[attr].name = strndup(name, strnlen(name, r->h.size - fixed));
	return pf->attrs[attr].name ? 0 : perf_file__fail(pf, -ENOMEM, "out of memory");
}

/* Apply a pipe-mode header record to @pf. */
static int pipe_record(struct perf_file *pf, const struct record *r)
{
	const size_t fixed = sizeof(struct perf_record_header_feature);
	int err;

	switch (r->h.type) {
	case PERF_RECORD_HEADER_ATTR:
		return header_attr(pf, r);
	case PERF_RECORD_EVENT_UPDATE:
		return event_update(pf, r);
	case PERF_RECORD_HEADER_TRACING_DATA: /* the payload follows, checked by the caller */
		if (r->h.size >= 12 && tracing__name_events(pf, r->p + r->h.size, ld32(r->p + 8)))
			return perf_file__fail(pf, -ENOMEM, "out of memory");
		return 0;
	case PERF_RECORD_HEADER_BUILD_ID:
		err = features__read_build_ids(&pf->feat, r->p, r->h.size);
		if (err == -ENOMEM)
			return perf_file__fail(pf, err, "out of memory");
		return 0;
	case PERF_RECORD_HEADER_FEATURE:
		if (r->h.size < fixed)
			return 0;
		err = features__read_one(pf, (int)(ld64(r->p + 8) & 0xff), r->p + fixed,
					 r->h.size - fixed);
		if (err == -ENOMEM)
			return perf_file__fail(pf, err, "out of memory");
		if (err && !pf->warn)
			perf_file__warn(pf, "HEADER_FEATURE %llu at offset %llu is malformed",
					(unsigned long long)ld64(r->p + 8),
					(unsigned long long)r->off);
		return 0;
	default:
		return 0;
	}
}

/*
 * Expand the records in [@from, @to) of pf->base into pf->expanded and
 * make them the records walked (pf->rbase, data_off 0). A record that does
 * not fit stops the stream there with a warning in pf->warn, as in a file.
 * Returns 0, or -errno with pf->err set (unknown compression, corrupt zstd
 * data, too much output, no memory).
 */
int stream__expand(struct perf_file *pf, u64 from, u64 to)
{
	struct out o = {0};
	ZSTD_DStream *zs = NULL;
	const char *why;
	u64 pos = from;
	int err = 0;

	o.max = MAX_EXPAND_BASE + MAX_EXPAND_RATIO * (u64)pf->size;
	pf->orig_off = from;
	pf->orig_end = to;
	while (pos < to && !err) {
		struct record r;
		u64 left = to - pos, extra;

		if (left < sizeof(r.h)) {
			perf_file__warn(pf, "truncated record at offset %llu, stopping there",
					(unsigned long long)pos);
			pf->stop_at = pos;
			break;
		}
		memcpy(&r.h, pf->base + pos, sizeof(r.h));
		if (r.h.size < sizeof(r.h) || r.h.size > left) {
			perf_file__warn(
			    pf, "bad record at offset %llu (type %u, size %u), stopping there",
			    (unsigned long long)pos, r.h.type, r.h.size);
			pf->stop_at = pos;
			break;
		}
		r.p = pf->base + pos;
		r.off = pos;
		extra = perf_file__trailing(&r);
		if (extra > left - r.h.size) {
			perf_file__warn(
			    pf, "record at offset %llu (type %u) runs past the end, stopping there",
			    (unsigned long long)pos, r.h.type);
			pf->stop_at = pos;
			break;
		}
		pos += r.h.size + extra;
		if (r.h.type == PERF_RECORD_COMPRESSED) {
			if (pf->feat.has_comp && pf->feat.comp_type != PERF_COMP_ZSTD) {
				err = perf_file__fail(
				    pf, -EINVAL,
				    "records compressed with type %u are not supported "
				    "(only zstd, type 1)",
				    pf->feat.comp_type);
				break;
			}
			if (!zs && (why = zstd_load()) != NULL) {
				err = perf_file__fail(pf, -ENOSYS,
						      "COMPRESSED records need libzstd: %s", why);
				break;
			}
			if (!zs) {
				zs = zstd.ZSTD_createDStream();
				/* perf's level-1 frames use small windows: 16 MiB caps a hostile
				 * one */
				if (!zs || zstd.ZSTD_isError(zstd.ZSTD_initDStream(zs)) ||
				    zstd.ZSTD_isError(
					zstd.ZSTD_DCtx_setParameter(zs, ZSTD_d_windowLogMax, 24))) {
					err = perf_file__fail(pf, -ENOMEM, "out of memory");
					break;
				}
			}
			err =
			    decompress(pf, zs, r.p + sizeof(struct perf_record_compressed),
				       r.h.size - sizeof(struct perf_record_compressed), &o, r.off);
			continue;
		}
		if (pf->pipe) {
			err = pipe_record(pf, &r);
			if (err)
				break;
		}
		err = out_room(&o, r.h.size);
		if (err) {
			err = out_fail(pf, err, &o);
			break;
		}
		memcpy(o.v + o.nr, r.p, r.h.size);
		o.nr += r.h.size;
	}
	if (zs)
		zstd.ZSTD_freeDStream(zs);
	if (err) {
		free(o.v);
		return err;
	}
	free(pf->expanded);
	pf->expanded = o.v;
	pf->rbase = o.v ? o.v : pf->base;
	pf->data_off = 0;
	pf->data_end = pf->walk_end = o.v ? o.nr : 0;
	return 0;
}
