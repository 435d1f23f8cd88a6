/* SPDX-License-Identifier: MIT */
/*
 * outside_rings.c - the outside run's per-CPU rings (outside.h). Each round
 * takes every record of every ring (preload/handler/ring.c), orders them by
 * time, and hands them to the file: MMAP2, COMM, FORK and EXIT also to the
 * unwinder's model, samples as they are (frame-pointer chains) or, when they
 * carry register and stack copies, rewritten with the unwound user stack as
 * an ordinary callchain, so perf report, perf script and hotspot show whole
 * stacks without unwinding anything. A FINISHED_ROUND record ends each round,
 * as perf record writes it. Not async-signal-safe.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autoprof/perf_file.h"
#include "handler/handler.h"
#include "outside.h"

#define MAX_CHAIN 1024

int outside_rings__map(struct outside_rings *r, const int *fd, int nr, unsigned pages)
{
	r->ring = calloc((size_t)nr, sizeof(*r->ring));
	if (!r->ring)
		return -ENOMEM;
	r->nr = nr;
	for (int i = 0; i < nr; i++) {
		int err = ring__map(&r->ring[i], fd[i], pages);

		if (err)
			return err;
	}
	return 0;
}

void outside_rings__unmap(struct outside_rings *r)
{
	for (int i = 0; i < r->nr; i++)
		ring__unmap(&r->ring[i]);
	free(r->ring);
	free(r->scratch);
	r->ring = NULL;
	r->scratch = NULL;
	r->nr = 0;
}

/* ring__drain's callback: the record, copied to the end of the round. */
static void take(void *ctx, const struct perf_event_header *rec, bool last)
{
	struct outside_rings *r = ctx;

	(void)last;
	if (r->scratch_len + rec->size > r->scratch_cap) {
		size_t cap = r->scratch_cap ? r->scratch_cap * 2 : 1 << 20;
		char *p;

		while (cap < r->scratch_len + rec->size)
			cap *= 2;
		p = realloc(r->scratch, cap);
		if (!p)
			return; /* counted as nothing: out of memory */
		r->scratch = p;
		r->scratch_cap = cap;
	}
	memcpy(r->scratch + r->scratch_len, rec, rec->size);
	r->scratch_len += rec->size;
}

struct at {
	uint64_t time;
	size_t off, seq;
};

static int by_time(const void *a, const void *b)
{
	const struct at *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* A record's time: a sample's field, else the sample_id trailer's (see AUTOPROF_SAMPLE_TYPE). */
static uint64_t time_of(const struct perf_event_header *h)
{
	uint64_t t = 0;

	if (h->type == PERF_RECORD_SAMPLE && h->size >= 40)
		memcpy(&t, (const char *)h + 32, 8);
	else if (h->type != PERF_RECORD_SAMPLE && h->size >= 8 + sizeof(struct autoprof_sample_id))
		memcpy(&t, (const char *)h + h->size - 24, 8);
	return t;
}

/* A sample in the file's format: merged (AUTOPROF_AGGREGATE) or written. */
static void put_sample(struct outside_rings *r, void *rec, size_t len, uint64_t time)
{
	if (outside_agg__fold(rec, len, time))
		perf_out__add(r->out, rec, len);
}

static uint64_t rd64(const char **p)
{
	uint64_t v;

	memcpy(&v, *p, 8);
	*p += 8;
	return v;
}

/*
 * A sample with register and stack copies, rewritten in the file's format:
 * id, ip, pid/tid, time, cpu, period, then the callchain: the kernel's part
 * (when asked for), PERF_CONTEXT_USER and the unwound user frames.
 */
static void put_dwarf_sample(struct outside_rings *r, const struct perf_event_header *h)
{
	const char *p = (const char *)(h + 1), *end = (const char *)h + h->size;
	uint64_t out[16 + 2 * MAX_CHAIN], *chain, nr = 0, abi = 0, size = 0, dyn;
	uint64_t kchain = 0;
	const char *regs = NULL, *stack = NULL, *kips = NULL;
	uint32_t pid, tid;
	int got = 0, depth = r->stack_depth > MAX_CHAIN ? MAX_CHAIN : r->stack_depth;
	struct perf_event_header *oh = (void *)out;

	if (h->size < 8 + 6 * 8)
		return;
	out[1] = rd64(&p); /* identifier */
	out[2] = rd64(&p); /* ip */
	out[3] = rd64(&p); /* pid, tid */
	out[4] = rd64(&p); /* time */
	out[5] = rd64(&p); /* cpu, res */
	out[6] = rd64(&p); /* period */
	pid = (uint32_t)out[3];
	tid = (uint32_t)(out[3] >> 32);
	if (r->callchain) {
		if (p + 8 > end)
			return;
		kchain = rd64(&p);
		if (kchain > (uint64_t)(end - p) / 8)
			return;
		kips = p;
		p += kchain * 8;
	}
	if (p + 8 <= end && (abi = rd64(&p))) {
		regs = p;
		p += 8 * (size_t)__builtin_popcountll(r->regs_mask);
	}
	if (p + 8 <= end && (size = rd64(&p))) {
		stack = p;
		if (p + size + 8 <= end) {
			memcpy(&dyn, p + size, 8);
			if (dyn < size)
				size = dyn;
		} else {
			stack = NULL;
		}
	}
	chain = out + 8;
	for (uint64_t i = 0; kips && i < kchain && nr < MAX_CHAIN; i++) {
		uint64_t ip;

		memcpy(&ip, kips + i * 8, 8);
		if (ip == PERF_CONTEXT_USER)
			break;
		chain[nr++] = ip;
	}
	/* The user stack: of a user-mode sample, or the user side of a kernel one (-k). */
	if ((regs && stack && regs <= end) ||
	    (h->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_USER) {
		chain[nr++] = PERF_CONTEXT_USER;
		if (regs && stack && regs <= end)
			got = unwind_user__unwind(r->uw, pid, tid, out[4], abi, r->regs_mask,
						  (const uint8_t *)regs, (const uint8_t *)stack,
						  size, chain + nr, depth);
		if (got <= 0 &&
		    (h->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_USER) {
			chain[nr++] = out[2];
			got = 0;
		}
		if (got < 0)
			got = 0;
		nr += (uint64_t)got;
		r->unwound++;
		if (got <= 1)
			r->short_stacks++;
	}
	out[7] = nr;
	oh->type = PERF_RECORD_SAMPLE;
	oh->misc = h->misc;
	oh->size = (uint16_t)(8 * (8 + nr));
	put_sample(r, out, oh->size, out[4]);
}

static void put(struct outside_rings *r, const struct perf_event_header *h, uint64_t time)
{
	struct perf_out *o = r->out;

	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		if (r->win && outside_windows__due(r->win, time)) {
			outside_agg__emit(); /* the window's merged samples, in its file */
			if (outside_windows__rotate(r->win, o, time) && !r->said_rotate) {
				fprintf(stderr, "autoprof: cannot create a window's file; its "
						"samples are lost, the next window tries again "
						"(said once)\n");
				r->said_rotate = true;
			}
		}
		o->samples++;
		if (!o->first_time || time < o->first_time)
			o->first_time = time;
		if (time > o->last_time)
			o->last_time = time;
		if (r->dwarf) {
			put_dwarf_sample(r, h);
		} else {
			static char copy[65536];

			memcpy(copy, h, h->size);
			put_sample(r, copy, h->size, time);
		}
		return;
	case PERF_RECORD_MMAP2: {
		const struct perf_record_mmap2 *mm = (const void *)h;
		char name[4096];
		size_t room = h->size - sizeof(*mm);

		snprintf(name, sizeof(name), "%.*s", (int)strnlen(mm->filename, room),
			 mm->filename);
		perf_out__note_file(o, name);
		break;
	}
	case PERF_RECORD_LOST:
		o->lost += ((const struct perf_record_lost *)h)->lost;
		break;
	case PERF_RECORD_LOST_SAMPLES:
		o->lost += ((const struct perf_record_lost_samples *)h)->lost;
		break;
	default:
		break;
	}
	unwind_user__record(r->uw, h, time);
	perf_out__add(o, h, h->size);
}

size_t outside_rings__drain(struct outside_rings *r)
{
	static const struct perf_event_header round = {PERF_RECORD_FINISHED_ROUND, 0, 8};
	char wrap[65536];
	struct at *v;
	size_t n = 0, cap = 0;

	r->scratch_len = 0;
	for (int i = 0; i < r->nr; i++)
		ring__drain(&r->ring[i], wrap, sizeof(wrap), take, r);
	if (!r->scratch_len)
		return 0;
	for (size_t off = 0; off < r->scratch_len;
	     off += ((struct perf_event_header *)(r->scratch + off))->size)
		cap++;
	v = malloc(cap * sizeof(*v));
	if (!v)
		return 0;
	for (size_t off = 0; off < r->scratch_len;) {
		const struct perf_event_header *h = (const void *)(r->scratch + off);

		v[n] = (struct at){time_of(h), off, n};
		n++;
		off += h->size;
	}
	qsort(v, n, sizeof(*v), by_time);
	for (size_t i = 0; i < n; i++)
		put(r, (const void *)(r->scratch + v[i].off), v[i].time);
	free(v);
	if (!outside_agg__on()) /* merged samples come late, with their first time: no rounds */
		perf_out__add(r->out, &round, sizeof(round));
	return n;
}
