// SPDX-License-Identifier: MIT
/*
 * tracing.c - the event names in perf's tracing data (the payload of a
 * pipe-mode HEADER_TRACING_DATA record, or the file's TRACING_DATA feature):
 * a tracepoint attr carries only the tracepoint's id; its "system:name" is
 * in the event format files the tracing data holds. Layout (perf's
 * trace-event-read.c): "\x17\x08\x44tracing", a version string, endianness
 * and long size bytes, the page size (u32); "header_page" and "header_event"
 * each a name, a u64 size and that many bytes; the ftrace formats (u32
 * count, each a u64 size and the text); then the event systems (u32 count,
 * each a NUL-terminated name, a u32 count and formats as above). A format
 * text starts "name: NAME\nID: N\n".
 */
#include "read/read.h"

#include <errno.h>
#include <stdlib.h>

struct cur {
	const u8 *p, *end;
	bool bad;
};

static u64 take(struct cur *c, size_t n)
{
	u64 v = 0;

	if (c->bad || (size_t)(c->end - c->p) < n) {
		c->bad = true;
		return 0;
	}
	memcpy(&v, c->p, n); /* perf writes the host's byte order: ours */
	c->p += n;
	return v;
}

static const char *take_str(struct cur *c)
{
	const u8 *nul = c->bad ? NULL : memchr(c->p, 0, (size_t)(c->end - c->p));
	const char *s = (const char *)c->p;

	if (!nul) {
		c->bad = true;
		return "";
	}
	c->p = nul + 1;
	return s;
}

/* Skip one "size, bytes" block; return its bytes (NULL if it does not fit). */
static const u8 *take_block(struct cur *c, u64 *len)
{
	const u8 *p;

	*len = take(c, 8);
	if (c->bad || *len > (u64)(c->end - c->p)) {
		c->bad = true;
		return NULL;
	}
	p = c->p;
	c->p += *len;
	return p;
}

/* Name the tracepoint attr of @pf whose id the format text @f names, "@sys:name". */
static int name_event(struct perf_file *pf, const char *sys, const u8 *f, u64 len)
{
	const char *t = (const char *)f, *end = t + len, *id;
	char name[128];
	size_t n, i;
	u64 num;

	if (len < 6 || memcmp(t, "name: ", 6))
		return 0;
	t += 6;
	n = strcspn(t, "\n");
	if (t + n >= end || n >= sizeof(name))
		return 0;
	memcpy(name, t, n);
	name[n] = 0;
	id = t + n + 1;
	if (end - id < 4 || memcmp(id, "ID: ", 4))
		return 0;
	num = strtoull(id + 4, NULL, 10);
	for (i = 0; i < pf->nr_attrs; i++) {
		struct evattr *ea = &pf->attrs[i];

		if (ea->attr.type != PERF_TYPE_TRACEPOINT || ea->attr.config != num || ea->name)
			continue;
		if (asprintf(&ea->name, "%s:%s", sys, name) < 0) {
			ea->name = NULL;
			return -ENOMEM;
		}
	}
	return 0;
}

int tracing__name_events(struct perf_file *pf, const u8 *p, u64 len)
{
	struct cur c = {p, p + len, false};
	u64 n, k, blen;
	u32 i, j, nsys, nfmt;
	const u8 *b;
	int err;

	if (len < 10 || memcmp(p, "\x17\x08\x44tracing", 10))
		return 0;
	c.p += 10;
	take_str(&c); /* version */
	take(&c, 2);  /* endianness, long size */
	take(&c, 4);  /* page size */
	for (k = 0; k < 2 && !c.bad; k++) {
		take_str(&c); /* "header_page", "header_event" */
		take_block(&c, &blen);
	}
	n = take(&c, 4); /* ftrace formats */
	for (k = 0; k < n && !c.bad; k++)
		take_block(&c, &blen);
	nsys = (u32)take(&c, 4);
	for (i = 0; i < nsys && !c.bad; i++) {
		const char *sys = take_str(&c);

		nfmt = (u32)take(&c, 4);
		for (j = 0; j < nfmt && !c.bad; j++) {
			b = take_block(&c, &blen);
			if (b && (err = name_event(pf, sys, b, blen)))
				return err;
		}
	}
	return 0;
}
