/* SPDX-License-Identifier: MIT */
/*
 * Unit test: the record builders (record__sample, record__comm, record__mmap2,
 * record__lost, record__throttle, record__kernel_mmap in
 * preload/handler/record.c). Each record is read back by a parser written
 * here from perf_event_open(2) alone (the fields a sample_type selects, in
 * the kernel's order; the sample_id_all trailer read from the record's end,
 * as perf does), not from the builders' code, and checked for its size
 * (a multiple of 8, at most 64 KB), its header, every field, zeroed padding,
 * and for never writing past the room it is given.
 */
#include <string.h>
#include <sys/mman.h>

#include "handler/handler.h"
#include "tap.h"

#define CANARY 0xa5

/* A sample read field by field in the order perf_event_open(2) gives. */
struct parsed {
	uint64_t identifier, ip, time, addr, id, stream_id, period, nr;
	uint32_t pid, tid, cpu, res;
	const uint64_t *chain;
	size_t end; /* bytes read */
};

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static void parse_sample(const uint8_t *rec, uint64_t type, struct parsed *s)
{
	const uint8_t *p = rec + sizeof(struct perf_event_header);

	memset(s, 0, sizeof(*s));
	if (type & PERF_SAMPLE_IDENTIFIER)
		s->identifier = get64(p), p += 8;
	if (type & PERF_SAMPLE_IP)
		s->ip = get64(p), p += 8;
	if (type & PERF_SAMPLE_TID)
		s->pid = get32(p), s->tid = get32(p + 4), p += 8;
	if (type & PERF_SAMPLE_TIME)
		s->time = get64(p), p += 8;
	if (type & PERF_SAMPLE_ADDR)
		s->addr = get64(p), p += 8;
	if (type & PERF_SAMPLE_ID)
		s->id = get64(p), p += 8;
	if (type & PERF_SAMPLE_STREAM_ID)
		s->stream_id = get64(p), p += 8;
	if (type & PERF_SAMPLE_CPU)
		s->cpu = get32(p), s->res = get32(p + 4), p += 8;
	if (type & PERF_SAMPLE_PERIOD)
		s->period = get64(p), p += 8;
	if (type & PERF_SAMPLE_CALLCHAIN) {
		s->nr = get64(p), p += 8;
		s->chain = (const uint64_t *)p;
		p += s->nr * 8;
	}
	s->end = (size_t)(p - rec);
}

/* The sample_id_all trailer of a non-sample record, read backwards from its end. */
static void parse_trailer(const uint8_t *rec, uint64_t type, struct parsed *s)
{
	const uint8_t *p = rec + ((const struct perf_event_header *)rec)->size;

	memset(s, 0, sizeof(*s));
	if (type & PERF_SAMPLE_IDENTIFIER)
		p -= 8, s->identifier = get64(p);
	if (type & PERF_SAMPLE_CPU)
		p -= 8, s->cpu = get32(p), s->res = get32(p + 4);
	if (type & PERF_SAMPLE_STREAM_ID)
		p -= 8, s->stream_id = get64(p);
	if (type & PERF_SAMPLE_ID)
		p -= 8, s->id = get64(p);
	if (type & PERF_SAMPLE_TIME)
		p -= 8, s->time = get64(p);
	if (type & PERF_SAMPLE_TID)
		p -= 8, s->pid = get32(p), s->tid = get32(p + 4);
	s->end = (size_t)(p - rec); /* where the trailer starts */
}

static const struct perf_event_header *hdr(const void *buf)
{
	return buf;
}

/* No byte of buf at or after from was written (still CANARY), up to len. */
static bool untouched(const uint8_t *buf, size_t from, size_t len)
{
	for (size_t i = from; i < len; i++)
		if (buf[i] != CANARY)
			return false;
	return true;
}

static bool zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* The trailer of rec says pid, tid, time, cpu 0 and our sample id, and starts at body_end. */
static bool trailer_is(const uint8_t *rec, size_t body_end, uint32_t pid, uint32_t tid,
		       uint64_t time)
{
	struct parsed t;

	parse_trailer(rec, AUTOPROF_SAMPLE_TYPE, &t);
	return t.end == body_end && t.pid == pid && t.tid == tid && t.time == time && t.cpu == 0 &&
	       t.res == 0 && t.identifier == AP_SAMPLE_ID;
}

static uint8_t buf[70000];

static void samples(void)
{
	static uint64_t chain[8200];
	struct parsed s;
	size_t n;

	for (unsigned i = 0; i < 8200; i++)
		chain[i] = i == 0 ? PERF_CONTEXT_USER : 0x400000 + i;
	memset(buf, CANARY, sizeof(buf));
	n = record__sample(buf, sizeof(buf), false, 0x401234, 100, 101, 5000000000ULL, 1, 250000,
			   chain, 5);
	parse_sample(buf, AUTOPROF_SAMPLE_TYPE, &s);
	ok(n == 8 + 7 * 8 + 5 * 8 && n % 8 == 0 && hdr(buf)->size == n &&
	       hdr(buf)->type == PERF_RECORD_SAMPLE && hdr(buf)->misc == PERF_RECORD_MISC_USER,
	   "SAMPLE: header (user), size 8 + 7 u64 + the chain (%zu)", n);
	ok(s.end == n && s.identifier == AP_SAMPLE_ID && s.ip == 0x401234 && s.pid == 100 &&
	       s.tid == 101 && s.time == 5000000000ULL && s.cpu == 1 && s.res == 0 &&
	       s.period == 250000 && s.nr == 5,
	   "SAMPLE: IDENTIFIER IP TID TIME CPU PERIOD CALLCHAIN in perf_event_open(2)'s order");
	ok(!memcmp(s.chain, chain, 5 * 8) && untouched(buf, n, 200),
	   "SAMPLE: the chain as given, context marker included; nothing written past it");
	n = record__sample(buf, sizeof(buf), true, 0xffffffff81000000ULL, 1, 2, 3, 0, 1, chain, 0);
	parse_sample(buf, AUTOPROF_SAMPLE_TYPE, &s);
	ok(n == 64 && hdr(buf)->misc == PERF_RECORD_MISC_KERNEL && s.nr == 0 && s.end == n &&
	       s.ip == 0xffffffff81000000ULL,
	   "SAMPLE: a kernel sample without a chain is 64 bytes, misc KERNEL");

	memset(buf, CANARY, sizeof(buf));
	ok(record__sample(buf, 8 + 7 * 8 + 3 * 8 - 1, false, 1, 1, 1, 1, 0, 1, chain, 3) == 0 &&
	       untouched(buf, 0, 200),
	   "SAMPLE: one byte short of room: 0, nothing written");
	ok(record__sample(buf, 8 + 7 * 8 + 3 * 8, false, 1, 1, 1, 1, 0, 1, chain, 3) == 88 &&
	       untouched(buf, 88, 200),
	   "SAMPLE: exactly the room it needs");
	n = record__sample(buf, sizeof(buf), false, 1, 1, 1, 1, 0, 1, chain, 8183);
	ok(n == 65528 && hdr(buf)->size == 65528,
	   "SAMPLE: 8183 frames, 65528 bytes, fit a u16 size");
	memset(buf, CANARY, sizeof(buf));
	ok(record__sample(buf, sizeof(buf), false, 1, 1, 1, 1, 0, 1, chain, 8184) == 0 &&
	       untouched(buf, 0, 100),
	   "SAMPLE: 8184 frames (65536 bytes) do not fit header.size: 0, nothing written");
}

/* A COMM of name: its size, its name field, its padding and its trailer. */
static bool comm_is(const char *name, bool exec, size_t want_size, const char *want_name)
{
	const struct perf_record_comm *r = (const void *)buf;
	size_t n, field = want_size - sizeof(*r) - sizeof(struct autoprof_sample_id);

	memset(buf, CANARY, sizeof(buf));
	n = record__comm(buf, sizeof(buf), 300, 301, name, 777, exec);
	return n == want_size && n % 8 == 0 && r->header.type == PERF_RECORD_COMM &&
	       r->header.size == n &&
	       r->header.misc ==
		   (PERF_RECORD_MISC_USER | (exec ? PERF_RECORD_MISC_COMM_EXEC : 0)) &&
	       r->pid == 300 && r->tid == 301 && !strcmp(r->comm, want_name) &&
	       zero((const uint8_t *)r->comm + strlen(want_name), field - strlen(want_name)) &&
	       trailer_is(buf, sizeof(*r) + field, 300, 301, 777) && untouched(buf, n, 100);
}

static void comms(void)
{
	ok(comm_is("w", false, 16 + 8 + 32, "w"), "COMM 'w': name padded to 8, trailer after it");
	ok(comm_is("1234567", false, 16 + 8 + 32, "1234567"), "COMM of 7 bytes: 8 with its NUL");
	ok(comm_is("12345678", true, 16 + 16 + 32, "12345678"),
	   "COMM of 8 bytes: 16; exec sets PERF_RECORD_MISC_COMM_EXEC");
	ok(comm_is("a-very-long-thread-name", false, 16 + 16 + 32, "a-very-long-thr"),
	   "COMM of 23 bytes: cut to the kernel's 15 (TASK_COMM_LEN 16 with the NUL)");
	ok(comm_is("", false, 16 + 8 + 32, ""), "COMM of an empty name: 8 zero bytes");
	memset(buf, CANARY, sizeof(buf));
	ok(record__comm(buf, 16 + 8 + 31, 1, 1, "w", 0, false) == 0 && untouched(buf, 0, 100),
	   "COMM: one byte short of room: 0, nothing written");
}

static void mmaps(void)
{
	const struct perf_record_mmap2 *r = (const void *)buf;
	static const uint8_t bid[20] = {1,  2,	3,  4,	5,  6,	7,  8,	9,  10,
					11, 12, 13, 14, 15, 16, 17, 18, 19, 20};
	static char longname[70000];
	size_t n, name_at = sizeof(*r);

	_Static_assert(sizeof(struct perf_record_mmap2) == 72, "MMAP2's fixed part");
	memset(buf, CANARY, sizeof(buf));
	n = record__mmap2(buf, sizeof(buf), 42, 0x7f0000001000, 0x2000, 0x1000, 8, 1, 123456,
			  PROT_READ | PROT_EXEC, MAP_PRIVATE, "/usr/lib/libx.so", 999, NULL, 0);
	ok(n == 72 + 24 + 32 && n % 8 == 0 && r->header.type == PERF_RECORD_MMAP2 &&
	       r->header.size == n && r->header.misc == PERF_RECORD_MISC_USER,
	   "MMAP2: header, size 72 + name (17 -> 24) + trailer (%zu)", n);
	ok(r->pid == 42 && r->tid == 42 && r->start == 0x7f0000001000 && r->len == 0x2000 &&
	       r->pgoff == 0x1000 && r->maj == 8 && r->min == 1 && r->ino == 123456 &&
	       r->ino_generation == 0 && r->prot == (PROT_READ | PROT_EXEC) &&
	       r->flags == MAP_PRIVATE,
	   "MMAP2: pid = tid, range, offset, device, inode, prot and flags");
	ok(!strcmp((const char *)buf + name_at, "/usr/lib/libx.so") &&
	       zero(buf + name_at + 16, 8) && trailer_is(buf, name_at + 24, 42, 42, 999) &&
	       untouched(buf, n, 100),
	   "MMAP2: the file name, zero-padded, then the trailer; nothing past it");

	memset(buf, CANARY, sizeof(buf));
	n = record__mmap2(buf, sizeof(buf), 42, 0x1000, 0x1000, 0, 8, 1, 123456, PROT_READ,
			  MAP_PRIVATE, "/bin/x", 5, bid, 20);
	ok(n == 72 + 8 + 32 &&
	       r->header.misc == (PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID) &&
	       r->build_id_size == 20 && r->reserved1 == 0 && r->reserved2 == 0 &&
	       !memcmp(r->build_id, bid, 20) && r->prot == PROT_READ &&
	       !strcmp((const char *)buf + name_at, "/bin/x") &&
	       trailer_is(buf, name_at + 8, 42, 42, 5),
	   "MMAP2 with a build id: MISC_MMAP_BUILD_ID, its size and bytes in place of dev/inode");
	memset(buf, CANARY, sizeof(buf));
	n = record__mmap2(buf, sizeof(buf), 42, 0x1000, 0x1000, 0, 8, 1, 123456, PROT_READ,
			  MAP_PRIVATE, "/bin/x", 5, bid, 21);
	ok(n == 72 + 8 + 32 && r->header.misc == PERF_RECORD_MISC_USER && r->maj == 8 &&
	       r->ino == 123456,
	   "MMAP2: a build id longer than 20 bytes is not written; device and inode are");

	memset(buf, CANARY, sizeof(buf));
	ok(record__mmap2(buf, 72 + 8 + 31, 1, 0, 0, 0, 0, 0, 0, 0, 0, "/bin/x", 0, NULL, 0) == 0 &&
	       untouched(buf, 0, 200),
	   "MMAP2: one byte short of room: 0, nothing written");
	memset(longname, 'x', 65600);
	longname[0] = '/';
	ok(record__mmap2(buf, sizeof(buf), 1, 0, 0, 0, 0, 0, 0, 0, 0, longname, 0, NULL, 0) == 0,
	   "MMAP2: a name that would make it over 64 KB: 0");

	memset(buf, CANARY, sizeof(buf));
	{
		const struct perf_record_mmap *k = (const void *)buf;
		static const char kname[] = "[kernel.kallsyms]_text";

		n = record__kernel_mmap(buf, sizeof(buf), 0xffffffff81000000ULL, 0x1000000);
		ok(n == 40 + 24 + 32 && n % 8 == 0 && k->header.type == PERF_RECORD_MMAP &&
		       k->header.misc == PERF_RECORD_MISC_KERNEL && k->header.size == n &&
		       k->pid == UINT32_MAX && k->tid == 0 && k->start == 0xffffffff81000000ULL &&
		       k->len == 0x1000000 && k->pgoff == 0xffffffff81000000ULL,
		   "kernel MMAP: pid -1, misc KERNEL, pgoff = the address of _text, as perf "
		   "synthesizes it");
		ok(!strcmp(k->filename, kname) &&
		       zero(buf + 40 + sizeof(kname), 24 - sizeof(kname)) &&
		       trailer_is(buf, 40 + 24, UINT32_MAX, 0, 0) && untouched(buf, n, 100),
		   "kernel MMAP: '[kernel.kallsyms]_text', padded, trailer for pid -1 at time 0");
		memset(buf, CANARY, sizeof(buf));
		ok(record__kernel_mmap(buf, n - 1, 1, 1) == 0 && untouched(buf, 0, 200),
		   "kernel MMAP: one byte short of room: 0, nothing written");
	}
}

static void others(void)
{
	const struct perf_record_lost *l = (const void *)buf;
	const struct perf_record_throttle *t = (const void *)buf;
	size_t n;

	memset(buf, CANARY, sizeof(buf));
	n = record__lost(buf, sizeof(buf), 7, 8, 1234, 99);
	ok(n == 24 + 32 && l->header.type == PERF_RECORD_LOST && l->header.size == n &&
	       l->header.misc == PERF_RECORD_MISC_USER && l->id == AP_SAMPLE_ID && l->lost == 99 &&
	       trailer_is(buf, 24, 7, 8, 1234) && untouched(buf, n, 100),
	   "LOST: the sampling event's id, the count, the trailer (56 bytes)");
	memset(buf, CANARY, sizeof(buf));
	ok(record__lost(buf, n - 1, 7, 8, 1234, 99) == 0 && untouched(buf, 0, 100),
	   "LOST: one byte short of room: 0, nothing written");

	for (int i = 0; i < 2; i++) {
		uint32_t type = i ? PERF_RECORD_UNTHROTTLE : PERF_RECORD_THROTTLE;

		memset(buf, CANARY, sizeof(buf));
		n = record__throttle(buf, sizeof(buf), type, 7, 9, 4321);
		ok(n == 32 + 32 && t->header.type == type && t->header.size == n &&
		       t->header.misc == PERF_RECORD_MISC_USER && t->time == 4321 &&
		       t->id == AP_SAMPLE_ID && t->stream_id == AP_SAMPLE_ID &&
		       trailer_is(buf, 32, 7, 9, 4321) && untouched(buf, n, 100),
		   "%s: time, id, stream id, the trailer (64 bytes)",
		   i ? "UNTHROTTLE" : "THROTTLE");
	}
	memset(buf, CANARY, sizeof(buf));
	ok(record__throttle(buf, 63, PERF_RECORD_THROTTLE, 1, 1, 1) == 0 && untouched(buf, 0, 100),
	   "THROTTLE: one byte short of room: 0, nothing written");
}

int main(void)
{
	plan(30);
	ok(AUTOPROF_SAMPLE_TYPE ==
		   (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
		    PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN) &&
	       sizeof(struct autoprof_sample_id) == 32,
	   "the sample format this test parses is the one the attrs declare");
	samples();
	comms();
	mmaps();
	others();
	return tap_done();
}
