/* Unit test: a thread's table of merged records (preload/handler/aggregate.c) with the memory
 * records' layout (aggregate__fold_at, AUTOPROF_AGGREGATE with AUTOPROF_MEMORY). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "memory.h" /* internal.h: the handler layer and its set-up */
#include "tap.h"

#define MAX_REC 4096

static struct writer w;
static struct ap_sampler sampler = {.writer = &w, .aggregate = true};
static struct ap_thread t = {.sampler = &sampler};
static char rec[MAX_REC];

/* A memory SAMPLE of tid with chain c0..c0+nr-1, its block's size and period. */
static size_t mem_rec(uint32_t tid, uint64_t time, uint64_t addr, uint64_t period, uint64_t c0,
		      unsigned nr, uint64_t size)
{
	uint64_t chain[16] = {PERF_CONTEXT_USER};

	for (unsigned i = 1; i < nr && i < 16; i++)
		chain[i] = c0 + i;
	return memory_sample__put(rec, sizeof(rec), 2, 100, tid, time, addr, period, chain, nr,
				  size);
}

/* Fold rec (len bytes) as the library does: the record stays in the buffer when not merged. */
static size_t fold(size_t len, uint64_t hash)
{
	return aggregate__fold_at(&t, rec, len, AP_MEMORY_PERIOD_AT, hash);
}

/* The totals of what the file holds after data_offset: records, summed period, addr != 0. */
struct seen {
	unsigned records, with_addr;
	uint64_t period, first_time;
};

static struct seen read_back(const char *path, uint64_t from, uint64_t to)
{
	struct seen s = {0};
	size_t n = to - from;
	char *buf = malloc(n ? n : 1);
	int fd = open(path, O_RDONLY);

	if (fd < 0 || pread(fd, buf, n, (off_t)from) != (ssize_t)n)
		n = 0;
	for (size_t pos = 0; pos + sizeof(struct perf_event_header) <= n;) {
		struct perf_event_header h;
		uint64_t v;

		memcpy(&h, buf + pos, sizeof(h));
		if (!h.size)
			break;
		if (h.type == PERF_RECORD_SAMPLE) {
			s.records++;
			memcpy(&v, buf + pos + AP_MEMORY_PERIOD_AT, 8);
			s.period += v;
			memcpy(&v, buf + pos + 40, 8);
			s.with_addr += v != 0;
			memcpy(&v, buf + pos + 32, 8);
			if (!s.first_time || v < s.first_time)
				s.first_time = v;
		}
		pos += h.size;
	}
	if (fd >= 0)
		close(fd);
	free(buf);
	return s;
}

int main(void)
{
	char path[] = "/tmp/autoprof-agg-test.XXXXXX";
	struct writer_event events[2] = {0};
	size_t len = aggregate__bytes(&sampler), kept = 0, n;
	void *mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t at, want = 0;
	struct seen s;
	int fd = mkstemp(path);

	plan(9);
	if (fd >= 0)
		close(fd);
	unlink(path);
	for (int i = 0; i < 2; i++) {
		events[i].attr.size = sizeof(events[i].attr);
		events[i].attr.type = PERF_TYPE_SOFTWARE;
		events[i].attr.sample_type = AP_MEMORY_SAMPLE_TYPE;
		events[i].attr.sample_id_all = 1;
		events[i].id = (uint64_t)i + 1;
		snprintf(events[i].name, sizeof(events[i].name), "e%d", i);
	}
	ok(mem != MAP_FAILED && writer__open(&w, path, events, 2, false) == 0,
	   "a file and a table");
	t.agg = aggregate__place(mem, len, 1000);

	/* 100 allocations of 48 bytes and 50 of 64 at one stack, on two threads */
	at = w.end;
	for (int i = 0; i < 150; i++) {
		n = mem_rec(i % 2 ? 7 : 8, 2000 + (uint64_t)i, 0x5000 + (uint64_t)i * 64,
			    i < 100 ? 48 : 64, 0x400000, 6, i < 100 ? 48 : 64);
		want += i < 100 ? 48 : 64;
		/* thread 7: the caller's hash of the key (as memory_agg.c's), thread 8: the
		 * record's */
		kept += fold(n, i % 2 ? (i < 100 ? 0x1235 : 0x4321) : 0);
	}
	ok(kept == 0, "every memory record merged (none kept in the buffer)");
	aggregate__emit_all(&t);
	s = read_back(path, at, w.end);
	ok(s.records == 4 && s.period == want,
	   "one record per thread and size: %u records, %llu bytes of %llu", s.records,
	   (unsigned long long)s.period, (unsigned long long)want);
	ok(s.first_time == 2000, "a merged record has its first allocation's time");

	/* other stacks and sizes stay apart; time, address and cpu are not in the key */
	at = w.end;
	n = mem_rec(7, 3000, 0x9000, 10, 0x400000, 6, 10);
	fold(n, 0);
	n = mem_rec(7, 3001, 0x9100, 10, 0x400000, 7, 10); /* one frame more */
	fold(n, 0);
	n = mem_rec(7, 3002, 0x9200, 10, 0x500000, 6, 10); /* other frames */
	fold(n, 0);
	n = mem_rec(7, 3003, 0x9300, 10, 0x400000, 6, 10); /* as the first */
	fold(n, 0);
	aggregate__emit_all(&t);
	s = read_back(path, at, w.end);
	ok(s.records == 3 && s.period == 40, "distinct stacks stay apart (%u records)", s.records);

	/* a table that fills is written early and counted, nothing dropped */
	at = w.end;
	want = 0;
	for (int i = 0; i < 10000; i++) {
		n = mem_rec(7, 4000 + (uint64_t)i, 0x9000, 16 + (uint64_t)i, 0x600000, 12,
			    16 + (uint64_t)i);
		want += 16 + (uint64_t)i;
		fold(n, 0);
	}
	ok(t.stats.agg_full > 0, "10000 distinct sizes fill the table (%llu times)",
	   (unsigned long long)t.stats.agg_full);
	aggregate__emit_all(&t);
	s = read_back(path, at, w.end);
	ok(s.records == 10000 && s.period == want,
	   "... and every record reaches the file: %u records, %llu of %llu bytes", s.records,
	   (unsigned long long)s.period, (unsigned long long)want);

	/* AUTOPROF_AGGREGATE_CHECK, or not merging: every record stays */
	n = mem_rec(7, 5000, 0x9000, 10, 0x400000, 6, 10);
	sampler.check_id = 9;
	ok(fold(n, 0) == n, "with AUTOPROF_AGGREGATE_CHECK a memory record stays as it is");
	sampler.check_id = 0;
	sampler.aggregate = false;
	ok(fold(n, 0) == n, "not merging: a memory record stays as it is");
	writer__finish(&w, true);
	unlink(path);
	return tap_done();
}
