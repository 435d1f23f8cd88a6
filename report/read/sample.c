// SPDX-License-Identifier: MIT
/*
 * sample.c - decode a SAMPLE payload and the sample_id trailer of other
 * records, generically from the attr's sample_type and read_format.
 *
 * Fields come in the kernel's order (perf_event_open(2), PERF_RECORD_SAMPLE).
 * sample__parse() stops after CALLCHAIN; sample__user_stack() reads the dwarf
 * fields that follow. Every field is bounds-checked against the record; a
 * short record is -EINVAL, never a read past it.
 */
#include "read/read.h"

#include <errno.h>

#define ID_TRAILER_BITS                                                                            \
	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |             \
	 PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

/* Size of the READ block for @fmt at @p, or -EINVAL if it does not fit in @left bytes. */
static long read_block_size(u64 fmt, const u8 *p, size_t left)
{
	size_t head = 0, entry = 8;
	u64 nr;

	if (fmt & PERF_FORMAT_ID)
		entry += 8;
	if (fmt & PERF_FORMAT_LOST)
		entry += 8;
	if (fmt & PERF_FORMAT_TOTAL_TIME_ENABLED)
		head += 8;
	if (fmt & PERF_FORMAT_TOTAL_TIME_RUNNING)
		head += 8;
	if (!(fmt & PERF_FORMAT_GROUP))
		return head + entry <= left ? (long)(head + entry) : -EINVAL;
	if (left < 8)
		return -EINVAL;
	nr = ld64(p);
	head += 8;
	if (head > left || nr > (left - head) / entry)
		return -EINVAL;
	return (long)(head + nr * entry);
}

/*
 * Decode the SAMPLE record @r of @pf into @s. Returns 0, -ENOENT if the
 * sample's id names no attr of the file, or -EINVAL if it is malformed.
 * s->chain points into the mapped file and stays valid while it is open.
 */
int sample__parse(const struct perf_file *pf, const struct record *r, struct sample *s)
{
	const u8 *p = r->p + sizeof(r->h), *end = r->p + r->h.size;
	const struct evattr *ea;
	u64 type;
	int attr = 0;

#define NEED(n)                                                                                    \
	do {                                                                                       \
		if ((size_t)(end - p) < (n))                                                       \
			return -EINVAL;                                                            \
	} while (0)

	memset(s, 0, sizeof(*s));
	s->misc = r->h.misc;
	if (pf->nr_attrs > 1 && pf->id_pos >= 0) {
		NEED((size_t)(pf->id_pos + 1) * 8);
		attr = perf_file__attr_of_id(pf, ld64(p + pf->id_pos * 8));
		if (attr < 0)
			return -ENOENT;
	}
	s->attr = attr;
	ea = &pf->attrs[attr];
	type = ea->attr.sample_type;
	s->period = ea->default_period;

	if (type & PERF_SAMPLE_IDENTIFIER) {
		NEED(8);
		s->id = ld64(p);
		p += 8;
	}
	if (type & PERF_SAMPLE_IP) {
		NEED(8);
		s->ip = ld64(p);
		s->has_ip = true;
		p += 8;
	}
	if (type & PERF_SAMPLE_TID) {
		NEED(8);
		s->pid = ld32(p);
		s->tid = ld32(p + 4);
		s->has_tid = true;
		p += 8;
	}
	if (type & PERF_SAMPLE_TIME) {
		NEED(8);
		s->time = ld64(p);
		s->has_time = true;
		p += 8;
	}
	if (type & PERF_SAMPLE_ADDR) {
		NEED(8);
		s->addr = ld64(p);
		p += 8;
	}
	if (type & PERF_SAMPLE_ID) {
		NEED(8);
		s->id = ld64(p);
		p += 8;
	}
	if (type & PERF_SAMPLE_STREAM_ID) {
		NEED(8);
		p += 8;
	}
	if (type & PERF_SAMPLE_CPU) {
		NEED(8);
		s->cpu = ld32(p);
		s->has_cpu = true;
		p += 8;
	}
	if (type & PERF_SAMPLE_PERIOD) {
		NEED(8);
		s->period = ld64(p);
		p += 8;
	}
	if (type & PERF_SAMPLE_READ) {
		long n = read_block_size(ea->attr.read_format, p, (size_t)(end - p));

		if (n < 0)
			return -EINVAL;
		p += n;
	}
	if (type & PERF_SAMPLE_CALLCHAIN) {
		u64 nr;

		NEED(8);
		nr = ld64(p);
		p += 8;
		if (nr > (u64)(end - p) / 8)
			return -EINVAL;
		s->nr_chain = nr;
		s->chain = p;
		p += nr * 8;
	}
	s->rest = p;
	s->end = end;
#undef NEED
	return 0;
}

/* Step *p over the RAW field (u32 size, data) that follows CALLCHAIN. Returns 0 or -EINVAL. */
static int skip_raw(const u8 **p, const u8 *end)
{
	u64 n;

	if (end - *p < 4)
		return -EINVAL;
	n = ld32(*p);
	if (n > (u64)(end - *p) - 4)
		return -EINVAL;
	*p += 4 + n;
	return 0;
}

/*
 * Read the BRANCH_STACK field at *p (nr, hw_idx when the attr asks for it,
 * nr entries of 24 bytes): its entries and count, *p stepped past it.
 * Returns 0 or -EINVAL.
 */
static int read_branches(const struct evattr *ea, const u8 **p, const u8 *end, const u8 **entries,
			 u64 *nr)
{
	u64 n;

	if (end - *p < 8)
		return -EINVAL;
	n = ld64(*p);
	*p += 8;
	if (ea->attr.branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX) {
		if (end - *p < 8)
			return -EINVAL;
		*p += 8;
	}
	if (n > (u64)(end - *p) / 24)
		return -EINVAL;
	*entries = *p;
	*nr = n;
	*p += n * 24;
	return 0;
}

int sample__branch_stack(const struct perf_file *pf, const struct sample *s, const u8 **entries,
			 u64 *nr)
{
	const struct evattr *ea = &pf->attrs[s->attr];
	const u8 *p = s->rest, *end = s->end, *e;
	u64 type = ea->attr.sample_type, n;

	*nr = 0;
	if (!(type & PERF_SAMPLE_BRANCH_STACK) || !p)
		return -ENOENT;
	if ((type & PERF_SAMPLE_RAW) && skip_raw(&p, end))
		return -EINVAL;
	if (read_branches(ea, &p, end, &e, &n))
		return -EINVAL;
	*entries = e;
	*nr = n;
	return 0;
}

/*
 * Decode the user registers and user stack dump of sample @s (perf record
 * --call-graph dwarf), the fields after CALLCHAIN: RAW and BRANCH_STACK are
 * skipped, REGS_USER and STACK_USER read. Returns 0, -ENOENT if the sample
 * type has no REGS_USER and STACK_USER or the sample carries no registers,
 * or -EINVAL if the record is too short. u->regs and u->stack point into the
 * mapped file.
 */
int sample__user_stack(const struct perf_file *pf, const struct sample *s, struct user_stack *u)
{
	const struct evattr *ea = &pf->attrs[s->attr];
	const u8 *p = s->rest, *end = s->end, *e;
	u64 type = ea->attr.sample_type, n;

	memset(u, 0, sizeof(*u));
	if ((type & (PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)) !=
		(PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER) ||
	    !p)
		return -ENOENT;
	if ((type & PERF_SAMPLE_RAW) && skip_raw(&p, end))
		return -EINVAL;
	if ((type & PERF_SAMPLE_BRANCH_STACK) && read_branches(ea, &p, end, &e, &n))
		return -EINVAL;
	if (end - p < 8)
		return -EINVAL;
	u->abi = ld64(p);
	p += 8;
	if (u->abi) {
		u->mask = ea->attr.sample_regs_user;
		n = (u64)__builtin_popcountll(u->mask);
		if (n > (u64)(end - p) / 8)
			return -EINVAL;
		u->regs = p;
		p += n * 8;
	}
	if (end - p < 8)
		return -EINVAL;
	n = ld64(p);
	p += 8;
	if (n) {
		if (n > (u64)(end - p) || (u64)(end - p) - n < 8)
			return -EINVAL;
		u->stack = p;
		u->size = ld64(p + n); /* dyn_size: how much of the dump is real */
		if (u->size > n)
			u->size = n;
	}
	return u->abi && u->regs ? 0 : -ENOENT;
}

/*
 * Decode the sample_id trailer of a non-SAMPLE record whose fixed part
 * (header included) is @fixed bytes. Fills s->pid/tid/time/id/cpu where
 * present and sets *body_end to where the trailer starts (the end of any
 * variable-length string). Returns 0 or -EINVAL if the record is too short.
 */
int sample__id_parse(const struct perf_file *pf, const struct record *r, size_t fixed,
		     struct sample *s, size_t *body_end)
{
	size_t size = r->h.size, n;
	const u8 *p;
	u64 type;
	int attr = 0;

	memset(s, 0, sizeof(*s));
	s->misc = r->h.misc;
	if (size < fixed)
		return -EINVAL;
	*body_end = size;
	if (!pf->sample_id_all)
		return 0;
	type = pf->attrs[0].attr.sample_type;
	if (pf->nr_attrs > 1 && (type & PERF_SAMPLE_IDENTIFIER) && size >= fixed + 8) {
		attr = perf_file__attr_of_id(pf, ld64(r->p + size - 8));
		if (attr < 0)
			attr = 0;
	}
	s->attr = attr;
	type = pf->attrs[attr].attr.sample_type & ID_TRAILER_BITS;
	n = (size_t)__builtin_popcountll(type) * 8;
	if (size < fixed + n)
		return -EINVAL;
	*body_end = size - n;
	p = r->p + *body_end;
	if (type & PERF_SAMPLE_TID) {
		s->pid = ld32(p);
		s->tid = ld32(p + 4);
		s->has_tid = true;
		p += 8;
	}
	if (type & PERF_SAMPLE_TIME) {
		s->time = ld64(p);
		s->has_time = true;
		p += 8;
	}
	if (type & PERF_SAMPLE_ID) {
		s->id = ld64(p);
		p += 8;
	}
	if (type & PERF_SAMPLE_STREAM_ID)
		p += 8;
	if (type & PERF_SAMPLE_CPU) {
		s->cpu = ld32(p);
		s->has_cpu = true;
		p += 8;
	}
	if (type & PERF_SAMPLE_IDENTIFIER)
		s->id = ld64(p);
	return 0;
}

/*
 * Fixed part (header included) of the kernel records whose body we decode;
 * the sample_id trailer, when there is one, follows it. Just the header for
 * every other type.
 */
size_t sample__fixed_size(u32 type)
{
	switch (type) {
	case PERF_RECORD_MMAP:
		return sizeof(struct perf_record_mmap);
	case PERF_RECORD_MMAP2:
		return sizeof(struct perf_record_mmap2);
	case PERF_RECORD_COMM:
		return sizeof(struct perf_record_comm);
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		return sizeof(struct perf_record_fork);
	case PERF_RECORD_LOST:
		return sizeof(struct perf_record_lost);
	case PERF_RECORD_LOST_SAMPLES:
		return sizeof(struct perf_record_lost_samples);
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		return sizeof(struct perf_record_throttle);
	default:
		return sizeof(struct perf_event_header);
	}
}

bool sample__mmap2_old_layout(const struct record *r)
{
	u8 c;

	if (r->h.type != PERF_RECORD_MMAP2 || r->h.size <= 64 + 8)
		return false;
	c = r->p[64];
	/* a prot word that starts like a path is no prot */
	return (c == '/' || c == '[' || c == '.') && r->p[65] >= ' ' && r->p[66] >= ' ';
}

/*
 * The sample-id fields (time, pid, tid, cpu) of any record @r: a SAMPLE's
 * own, a kernel record's trailer. False when it has none or is malformed;
 * *@body_end is where the body before the trailer ends.
 */
bool sample__record_ids(const struct perf_file *pf, const struct record *r, struct sample *id,
			size_t *body_end)
{
	*body_end = r->h.size;
	if (r->h.type == PERF_RECORD_SAMPLE)
		return sample__parse(pf, r, id) == 0;
	if (r->h.type >= PERF_RECORD_USER_TYPE_START || r->h.size < sample__fixed_size(r->h.type))
		return false;
	return sample__id_parse(pf, r, sample__fixed_size(r->h.type), id, body_end) == 0;
}
