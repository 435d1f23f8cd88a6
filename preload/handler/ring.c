/* SPDX-License-Identifier: MIT */
/*
 * ring.c - read a perf mmap ring buffer, the way libperf's tools/lib/perf/mmap.c does.
 *
 * Each ring has exactly one reader (the thread that owns the event, in its
 * signal handler), so there are no locks: data_head is loaded with acquire
 * semantics, records are consumed, then data_tail is stored with release.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "handler.h"

/* Map 1 + data_pages pages of fd (data_pages a power of two). Returns 0 or -errno. */
int ring__map(struct ring *r, int fd, unsigned data_pages)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *p;

	r->map_len = page * (1 + data_pages);
	p = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		r->page = NULL;
		return -errno;
	}
	r->page = p;
	r->data = (const char *)p + page;
	r->mask = (uint64_t)page * data_pages - 1;
	return 0;
}

void ring__unmap(struct ring *r)
{
	if (r->page)
		munmap(r->page, r->map_len);
	r->page = NULL;
}

bool ring__pending(const struct ring *r)
{
	return r->page &&
	       __atomic_load_n(&r->page->data_head, __ATOMIC_ACQUIRE) != r->page->data_tail;
}

/*
 * Hand every record between data_tail and data_head to fn, then release the
 * space. A record whose body wraps around the end of the ring is copied into
 * scratch first; one larger than scratch is skipped. Async-signal-safe.
 */
void ring__drain(struct ring *r, char *scratch, size_t scratch_len, ring_record_fn fn, void *ctx)
{
	uint64_t head, tail, pos, last_sample = UINT64_MAX;
	uint64_t size = r->mask + 1;

	if (!r->page)
		return;
	head = __atomic_load_n(&r->page->data_head, __ATOMIC_ACQUIRE);
	tail = r->page->data_tail;
	if (head - tail > size) /* fell behind: the kernel never lets this happen */
		tail = head - size;

	/* First pass over the headers: which SAMPLE is the newest? */
	for (pos = tail; pos < head;) {
		const struct perf_event_header *h = (const void *)(r->data + (pos & r->mask));

		if (h->size < sizeof(*h))
			break;
		if (h->type == PERF_RECORD_SAMPLE)
			last_sample = pos;
		pos += h->size;
	}

	for (pos = tail; pos < head;) {
		const struct perf_event_header *h = (const void *)(r->data + (pos & r->mask));
		uint64_t off = pos & r->mask;
		uint16_t len = h->size;

		if (len < sizeof(*h))
			break; /* corrupt: drop the rest */
		if (off + len > size) {
			size_t first = size - off;

			if (len <= scratch_len) {
				memcpy(scratch, r->data + off, first);
				memcpy(scratch + first, r->data, len - first);
				fn(ctx, (const void *)scratch, pos == last_sample);
			}
		} else {
			fn(ctx, h, pos == last_sample);
		}
		pos += len;
	}
	__atomic_store_n(&r->page->data_tail, head, __ATOMIC_RELEASE);
}
