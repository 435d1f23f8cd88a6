/* SPDX-License-Identifier: MIT */
/*
 * aggregate.c - a thread's samples merged by stack (AUTOPROF_AGGREGATE).
 *
 * Each thread has a table of the SAMPLE records it built in the current
 * window, keyed by everything but their time, cpu and period: the event (id),
 * the kernel or user flag, the ip, the thread and the whole call chain
 * (kernel part included). A sample whose key is in the table adds its period
 * to the record there; a new key copies the record into the table's pool.
 * The record keeps the time and cpu of the first sample of its window.
 *
 * The pool is a run of whole records in the file's format, so emitting it is
 * one writer__append. It is emitted when the table or the pool is full, when
 * the window ends (checked at each flush of the thread, or at a rotation:
 * aggregate__emit_all), and when the thread stops (exit, exec, a deadly
 * signal, the end of the process). A thread's first window is 0.2 s and each
 * next one twice as long, up to WINDOW_NS: a short program, or one that ends
 * with no code of ours running (SIGKILL, a raw exit_group as Go's os.Exit),
 * loses at most the samples of its last window, and a service writes one
 * record per stack every 10 s.
 *
 * Memory: one area per thread in the thread's mapping (samplers.c), made
 * before the thread samples; nothing is allocated here. The table is open
 * addressing with linear probing, hash of the key words, full compare on a
 * hash match. Everything here is async-signal-safe and touches only the
 * calling thread's own table (or one whose handler is held off).
 */
#include <string.h>

#include "handler.h"

#define SLOTS	   4096		   /* a power of two */
#define MAX_USED   (SLOTS * 3 / 4) /* then the table is emitted */
#define POOL_BYTES (384 * 1024)	   /* records of the window */
#define WINDOW_NS  10000000000ULL  /* at most 10 s of samples held back */
#define FIRST_NS   200000000ULL	   /* the first window: 0.2 s, then twice as long each time */
#define PAGE_UP(x) (((x) + 4095) & ~(size_t)4095)

/*
 * Offsets in our SAMPLE record (record.c): header, id, ip, tid, time, cpu,
 * period, nr, chain. The key is the record but for what lies between the tid
 * and the end of the period (time, cpu: and in a memory record, memory.c's
 * layout, the block's address), so a layout is told by its period's offset.
 */
#define KEY_HEAD_END 32 /* header, id, ip, pid/tid */
#define AT_PERIOD    48

struct slot {
	uint64_t hash;
	uint32_t off; /* in the pool, plus one; 0: empty */
	uint32_t len;
};

struct ap_agg {
	uint64_t window_start, window_len;
	uint32_t used;
	size_t pool_len;
	struct slot slots[SLOTS];
	char pool[POOL_BYTES];
};

/* The bytes a thread's mapping needs for its table (0 when not merging). */
size_t aggregate__bytes(const struct ap_sampler *s)
{
	return s->aggregate || s->check_id ? PAGE_UP(sizeof(struct ap_agg)) : 0;
}

/* Make an empty table in mem (len bytes from aggregate__bytes, zeroed), its window starting now. */
struct ap_agg *aggregate__place(void *mem, size_t len, uint64_t now)
{
	struct ap_agg *a = mem;

	if (!mem || len < sizeof(*a))
		return NULL;
	a->window_start = now;
	a->window_len = FIRST_NS;
	return a;
}

/* A 64-bit hash of the key words of a record of len bytes whose period is at
 * offset at. Async-signal-safe. */
static uint64_t key_hash(const char *rec, size_t len, size_t at)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL, w;

	for (size_t i = 0; i + 8 <= len; i += 8) {
		if (i == KEY_HEAD_END)
			i = at + 8;
		memcpy(&w, rec + i, 8);
		h ^= w;
		h *= 0xff51afd7ed558ccdULL;
		h ^= h >> 32;
	}
	return h;
}

/* Do records a and b (len bytes each, b's period at at) have the same key? The
 * head holds the event's id, and one event has one layout. Async-signal-safe. */
static bool same_key(const char *a, const char *b, size_t len, size_t at)
{
	return !memcmp(a, b, KEY_HEAD_END) && !memcmp(a + at + 8, b + at + 8, len - at - 8);
}

/*
 * Append t's merged records to the file and empty the table. Call it on t's
 * own thread (its handler, or with its signal blocked), or with t's handler
 * held off (t being stopped): at a window's end, before a rotation, at a
 * flush that must be complete. Async-signal-safe.
 */
void aggregate__emit_all(struct ap_thread *t)
{
	struct ap_agg *a = t->agg;

	if (!a || !a->used)
		return;
	writer__append(t->sampler->writer, a->pool, a->pool_len);
	memset(a->slots, 0, sizeof(a->slots));
	a->used = 0;
	a->pool_len = 0;
}

/* Empty t's table without writing it (a forked child's copy of its parent's), its window
 * starting at now. Async-signal-safe. */
void aggregate__drop(struct ap_thread *t, uint64_t now)
{
	struct ap_agg *a = t->agg;

	if (!a)
		return;
	if (a->used)
		memset(a->slots, 0, sizeof(a->slots));
	a->used = 0;
	a->pool_len = 0;
	a->window_start = now;
	a->window_len = FIRST_NS;
}

/* Emit t's table when its window is over; now is a sample's time. Async-signal-safe. */
void aggregate__maybe_emit(struct ap_thread *t, uint64_t now)
{
	struct ap_agg *a = t->agg;

	if (!a || now < a->window_start + a->window_len)
		return;
	aggregate__emit_all(t);
	a->window_start = now;
	if (a->window_len < WINDOW_NS)
		a->window_len = a->window_len * 2 < WINDOW_NS ? a->window_len * 2 : WINDOW_NS;
}

/*
 * Merge the SAMPLE rec (len bytes, its period at at) into a's table, emitting
 * it first when full (counted in t's stats: the end of the run says so).
 * Async-signal-safe.
 */
static void merge(struct ap_thread *t, struct ap_agg *a, const char *rec, size_t len, size_t at,
		  uint64_t h)
{
	uint32_t i;

	if (a->used >= MAX_USED || a->pool_len + len > sizeof(a->pool)) {
		aggregate__emit_all(t);
		t->stats.agg_full++;
	}
	for (i = (uint32_t)h & (SLOTS - 1);; i = (i + 1) & (SLOTS - 1)) {
		struct slot *s = &a->slots[i];

		if (!s->off) {
			memcpy(a->pool + a->pool_len, rec, len);
			s->hash = h;
			s->off = (uint32_t)a->pool_len + 1;
			s->len = (uint32_t)len;
			a->pool_len += len;
			a->used++;
			return;
		}
		if (s->hash == h && s->len == len && same_key(a->pool + s->off - 1, rec, len, at)) {
			char *period = a->pool + s->off - 1 + at;
			uint64_t sum, add;

			memcpy(&sum, period, 8);
			memcpy(&add, rec + at, 8);
			sum += add;
			memcpy(period, &sum, 8);
			return;
		}
	}
}

/*
 * Take the record of len bytes that t's handler just built at rec (in t's
 * buffer, not yet counted in t->len). Returns the bytes to keep in the
 * buffer: len, or 0 when a SAMPLE went into the table instead. With
 * AUTOPROF_AGGREGATE_CHECK the sample stays and a copy under the check
 * event's id is merged. Async-signal-safe.
 */
size_t aggregate__fold(struct ap_thread *t, void *rec, size_t len)
{
	struct perf_event_header h;
	struct ap_agg *a = t->agg;
	uint64_t id;

	if (!a || len < AT_PERIOD + 16 || len > sizeof(a->pool))
		return len;
	memcpy(&h, rec, sizeof(h));
	if (h.type != PERF_RECORD_SAMPLE)
		return len;
	if (!t->sampler->check_id) {
		merge(t, a, rec, len, AT_PERIOD, key_hash(rec, len, AT_PERIOD));
		return 0;
	}
	memcpy(&id, (char *)rec + 8, 8);
	if (id != AP_SAMPLE_ID)
		return len; /* only the sampling event has a merged twin */
	memcpy((char *)rec + 8, &t->sampler->check_id, 8);
	merge(t, a, rec, len, AT_PERIOD, key_hash(rec, len, AT_PERIOD));
	memcpy((char *)rec + 8, &id, 8);
	return len;
}

/*
 * Merge the SAMPLE record of len bytes at rec, laid out with its period at
 * byte at (after the time, cpu and whatever else the merge forgets: a memory
 * record's block address), into t's table when t merges its samples
 * (AUTOPROF_AGGREGATE, not _CHECK: then every record stays as it is).
 * hash: the caller's hash of the key (equal keys, equal hashes: a stack's
 * id and the block's size for memory records), or 0 to hash the record.
 * Returns the bytes to keep in t's buffer: 0 when merged. Call it as
 * aggregate__fold (t entered). Async-signal-safe.
 */
size_t aggregate__fold_at(struct ap_thread *t, void *rec, size_t len, size_t at, uint64_t hash)
{
	struct ap_agg *a = t->agg;

	if (!a || !t->sampler->aggregate || t->sampler->check_id || at < KEY_HEAD_END ||
	    len < at + 16 || len > sizeof(a->pool))
		return len;
	merge(t, a, rec, len, at, hash ? hash : key_hash(rec, len, at));
	return 0;
}
