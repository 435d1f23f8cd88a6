/* SPDX-License-Identifier: MIT */
/*
 * Unit test: the perf ring reader (ring__drain, ring__pending, ring__map,
 * ring__unmap in preload/handler/ring.c), on rings laid out in memory the
 * way the kernel fills them: free-running data_head and data_tail, records
 * wrapping at the ring's end, a reader that fell behind, a corrupt header,
 * many producer/reader rounds; then on a real perf event's ring when the
 * kernel lets this process open one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "handler/handler.h"
#include "tap.h"

#define RING	512 /* data bytes of the fake rings */
#define SCRATCH 256

/* What the callback saw, record by record. */
struct seen {
	int n;
	struct {
		uint32_t type;
		uint16_t size;
		bool last_sample, in_scratch;
		uint8_t bytes[RING];
	} r[64];
	const char *scratch;
	const struct ring *ring;
	bool outside; /* a record not in the ring's data nor in scratch */
};

static void collect(void *ctx, const struct perf_event_header *h, bool last_sample)
{
	struct seen *s = ctx;
	const char *p = (const char *)h;

	if (s->n >= 64)
		return;
	s->r[s->n].type = h->type;
	s->r[s->n].size = h->size;
	s->r[s->n].last_sample = last_sample;
	s->r[s->n].in_scratch = p == s->scratch;
	if (p != s->scratch &&
	    (p < s->ring->data || p + h->size > s->ring->data + s->ring->mask + 1))
		s->outside = true;
	memcpy(s->r[s->n].bytes, h, h->size <= RING ? h->size : RING);
	s->n++;
}

/* A fake ring: the control page and RING data bytes. */
static struct perf_event_mmap_page *page;
static char data[RING] __attribute__((aligned(8)));
static char scratch[SCRATCH] __attribute__((aligned(8)));

static void ring_reset(struct ring *r, uint64_t tail)
{
	memset(page, 0, sizeof(*page));
	memset(data, 0xee, sizeof(data));
	page->data_head = page->data_tail = tail;
	r->page = page;
	r->data = data;
	r->mask = RING - 1;
	r->map_len = 0;
}

/* A record of type and size whose body bytes are seq, seq + 1, ... */
static void make(uint8_t *out, uint32_t type, uint16_t size, uint8_t seq)
{
	struct perf_event_header h = {.type = type, .misc = 0, .size = size};

	memcpy(out, &h, sizeof(h));
	for (size_t i = sizeof(h); i < size; i++)
		out[i] = (uint8_t)(seq + i);
}

/* The kernel's side: write a record at data_head (wrapping) and publish it. */
static void produce(uint32_t type, uint16_t size, uint8_t seq)
{
	uint8_t rec[4096];
	uint64_t head = page->data_head;

	make(rec, type, size, seq);
	for (size_t i = 0; i < size; i++)
		data[(head + i) & (RING - 1)] = (char)rec[i];
	__atomic_store_n(&page->data_head, head + size, __ATOMIC_RELEASE);
}

static bool same(const struct seen *s, int i, uint32_t type, uint16_t size, uint8_t seq)
{
	uint8_t want[4096];

	make(want, type, size, seq);
	return i < s->n && s->r[i].type == type && s->r[i].size == size &&
	       !memcmp(s->r[i].bytes, want, size);
}

static void drain(struct ring *r, struct seen *s, size_t scratch_len)
{
	memset(s, 0, sizeof(*s));
	s->scratch = scratch;
	s->ring = r;
	ring__drain(r, scratch, scratch_len, collect, s);
}

/* Many rounds of a producer and the reader through the small ring. */
static bool rounds(struct ring *r, int *delivered)
{
	static struct seen s;
	unsigned seed = 12345;
	int made = 0, got = 0;
	bool good = true;

	ring_reset(r, 0);
	for (int round = 0; round < 400; round++) {
		int batch = 1 + (int)(seed % 4);
		uint16_t sizes[4];

		for (int i = 0; i < batch; i++) {
			seed = seed * 1103515245 + 12345;
			sizes[i] = (uint16_t)(8 * (1 + (seed >> 16) % 14)); /* 8..112 */
			produce(i % 2 ? PERF_RECORD_MMAP2 : PERF_RECORD_SAMPLE, sizes[i],
				(uint8_t)(made + i));
		}
		drain(r, &s, SCRATCH);
		good &= s.n == batch && !s.outside && page->data_tail == page->data_head;
		for (int i = 0; i < batch && i < s.n; i++)
			good &= same(&s, i, i % 2 ? PERF_RECORD_MMAP2 : PERF_RECORD_SAMPLE,
				     sizes[i], (uint8_t)(made + i));
		made += batch;
		got += s.n;
	}
	*delivered = got;
	return good && got == made && page->data_head > 50 * RING;
}

/* A real perf event's ring: task-clock samples of this thread. */
static void real_ring(void)
{
	struct perf_event_attr a = {
	    .type = PERF_TYPE_SOFTWARE,
	    .size = sizeof(a),
	    .config = PERF_COUNT_SW_TASK_CLOCK,
	    .sample_period = 100000, /* every 0.1 ms of CPU */
	    .sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME,
	    .disabled = 1,
	    .exclude_kernel = 1,
	    .exclude_hv = 1,
	};
	static struct seen s;
	struct ring r = {0};
	int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0), samples = 0;
	bool sizes_ok = true;
	volatile uint64_t spin = 0;

	if (fd < 0) {
		skip(3, "perf_event_open refused here (perf_event_paranoid, seccomp)");
		return;
	}
	ok(ring__map(&r, fd, 2) == 0 && r.page && r.mask + 1 == 2 * (uint64_t)getpagesize(),
	   "ring__map maps a real event's ring of 2 data pages");
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	for (int i = 0; i < 3000000; i++)
		spin += (uint64_t)i;
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	memset(&s, 0, sizeof(s));
	s.scratch = scratch;
	s.ring = &r;
	ring__drain(&r, scratch, SCRATCH, collect, &s);
	for (int i = 0; i < s.n; i++) {
		sizes_ok &= s.r[i].size >= 8 && s.r[i].size % 8 == 0;
		samples += s.r[i].type == PERF_RECORD_SAMPLE;
	}
	ok(samples > 0 && sizes_ok && !ring__pending(&r) &&
	       r.page->data_tail == __atomic_load_n(&r.page->data_head, __ATOMIC_ACQUIRE),
	   "the kernel's records drain whole, 8-byte sized (%d samples of %d records)", samples,
	   s.n);
	ring__unmap(&r);
	close(fd);
	ok(r.page == NULL && !ring__pending(&r), "ring__unmap: nothing mapped, nothing pending");
}

int main(void)
{
	static struct seen s;
	struct ring r = {0};
	int delivered = 0;
	bool good;

	page = aligned_alloc(4096, 4096);
	if (!page)
		return 1;
	plan(24);

	ok(!ring__pending(&r), "an unmapped ring has nothing pending");
	drain(&r, &s, SCRATCH);
	ok(s.n == 0, "draining an unmapped ring calls nothing");

	ring_reset(&r, 7 * RING);
	ok(!ring__pending(&r), "an empty ring has nothing pending");
	drain(&r, &s, SCRATCH);
	ok(s.n == 0 && page->data_tail == 7 * RING, "draining an empty ring calls nothing");

	/* Four records, no wrap: in order, in place, the newest SAMPLE flagged. */
	ring_reset(&r, 0);
	produce(PERF_RECORD_SAMPLE, 40, 1);
	produce(PERF_RECORD_COMM, 32, 2);
	produce(PERF_RECORD_SAMPLE, 48, 3);
	produce(PERF_RECORD_MMAP2, 64, 4);
	ok(ring__pending(&r), "records published: pending");
	drain(&r, &s, SCRATCH);
	ok(s.n == 4 && same(&s, 0, PERF_RECORD_SAMPLE, 40, 1) &&
	       same(&s, 1, PERF_RECORD_COMM, 32, 2) && same(&s, 2, PERF_RECORD_SAMPLE, 48, 3) &&
	       same(&s, 3, PERF_RECORD_MMAP2, 64, 4),
	   "every record, in order, byte for byte");
	ok(!s.outside && !s.r[0].in_scratch && !s.r[3].in_scratch,
	   "records that do not wrap are read in place");
	ok(!s.r[0].last_sample && !s.r[1].last_sample && s.r[2].last_sample && !s.r[3].last_sample,
	   "last_sample marks the newest SAMPLE only");
	ok(page->data_tail == 184 && !ring__pending(&r), "data_tail moves to data_head");
	ok(page->data_head == 184, "the reader leaves data_head alone");

	/* Free-running positions far past the size; a record split at the end. */
	ring_reset(&r, 5 * RING - 40);
	produce(PERF_RECORD_COMM, 24, 10);   /* [size - 40, size - 16) */
	produce(PERF_RECORD_SAMPLE, 48, 11); /* 16 bytes at the end, 32 at the start */
	produce(PERF_RECORD_LOST, 32, 12);   /* after the wrap */
	drain(&r, &s, SCRATCH);
	ok(s.n == 3 && same(&s, 0, PERF_RECORD_COMM, 24, 10) &&
	       same(&s, 1, PERF_RECORD_SAMPLE, 48, 11) && same(&s, 2, PERF_RECORD_LOST, 32, 12),
	   "a record split at the ring's end arrives whole, between its neighbours");
	ok(s.r[1].in_scratch && !s.r[2].in_scratch && !s.outside,
	   "the split record is handed over as a copy in scratch, the others in place");
	ok(s.r[1].last_sample && !s.r[2].last_sample,
	   "a split SAMPLE that is the newest is flagged; a LOST record is not a sample");
	ok(page->data_tail == 5 * RING + 64, "data_tail past the wrap");

	/* A record ending exactly at the ring's end, then one at its start. */
	ring_reset(&r, 3 * RING - 64);
	produce(PERF_RECORD_SAMPLE, 64, 20);
	produce(PERF_RECORD_SAMPLE, 16, 21);
	drain(&r, &s, SCRATCH);
	ok(s.n == 2 && same(&s, 0, PERF_RECORD_SAMPLE, 64, 20) &&
	       same(&s, 1, PERF_RECORD_SAMPLE, 16, 21) && !s.r[0].last_sample && s.r[1].last_sample,
	   "a record that ends at the ring's end is whole; the next starts at offset 0");

	/* Split records against the scratch size: as large fits, larger is skipped. */
	ring_reset(&r, RING - 8);
	produce(PERF_RECORD_MMAP2, 64, 30); /* split, 64 <= 64 */
	produce(PERF_RECORD_COMM, 16, 31);
	drain(&r, &s, 64);
	ok(s.n == 2 && same(&s, 0, PERF_RECORD_MMAP2, 64, 30) &&
	       same(&s, 1, PERF_RECORD_COMM, 16, 31),
	   "a split record exactly as large as scratch is delivered");
	ring_reset(&r, RING - 8);
	produce(PERF_RECORD_MMAP2, 72, 32); /* split, 72 > 64 */
	produce(PERF_RECORD_COMM, 16, 33);
	drain(&r, &s, 64);
	ok(s.n == 1 && same(&s, 0, PERF_RECORD_COMM, 16, 33) && page->data_tail == page->data_head,
	   "a split record larger than scratch is skipped, the next one still arrives");

	/* A corrupt header (size below 8): the rest is dropped, the space released. */
	ring_reset(&r, 0);
	produce(PERF_RECORD_SAMPLE, 24, 40);
	produce(PERF_RECORD_COMM, 24, 41);
	{
		struct perf_event_header bad = {.type = PERF_RECORD_SAMPLE, .size = 0};

		memcpy(data + 24, &bad, sizeof(bad));
	}
	drain(&r, &s, SCRATCH);
	ok(s.n == 1 && same(&s, 0, PERF_RECORD_SAMPLE, 24, 40) && page->data_tail == 48,
	   "a header of size 0 ends the drain (no endless loop) and releases the ring");

	/* A reader that fell behind by more than the ring starts at head - size. */
	ring_reset(&r, 0);
	for (int i = 0; i < (RING + 64) / 32; i++)
		produce(PERF_RECORD_SAMPLE, 32, (uint8_t)(50 + i));
	page->data_tail = 0; /* head is RING + 64 ahead */
	drain(&r, &s, SCRATCH);
	ok(s.n == RING / 32 && same(&s, 0, PERF_RECORD_SAMPLE, 32, 52) &&
	       same(&s, s.n - 1, PERF_RECORD_SAMPLE, 32, (uint8_t)(50 + (RING + 64) / 32 - 1)),
	   "fell behind: the last ring's worth is read, oldest overwritten records left out (%d)",
	   s.n);

	/* LOST records from the kernel go through like any other. */
	ring_reset(&r, 0);
	produce(PERF_RECORD_LOST, 32, 60);
	drain(&r, &s, SCRATCH);
	ok(s.n == 1 && same(&s, 0, PERF_RECORD_LOST, 32, 60) && !s.r[0].last_sample,
	   "a LOST record is handed over, not flagged as a sample");

	good = rounds(&r, &delivered);
	ok(good,
	   "400 producer/reader rounds through a %d-byte ring: %d records, "
	   "each once, in order, whole",
	   RING, delivered);

	real_ring();
	free(page);
	return tap_done();
}
