/* SPDX-License-Identifier: MIT */
/*
 * memory.h - native memory profiles (AUTOPROF_MEMORY): allocations sampled
 * by bytes, and what of them is still live.
 *
 *   wrap/alloc.c       malloc & co interposed, the real ones found without
 *                      allocating (a static arena serves dlsym's own calls)
 *   session/memory.c   the Poisson sampling, each sample's stack, its record
 *                      of alloc-bytes; the attrs; start, stop, fork
 *   session/live.c     the sampled blocks still live, by address, and their
 *                      stacks; written as live-bytes records at the end
 *
 * Sampling (tcmalloc's and heapprofd's scheme): each thread counts down the
 * bytes it allocates from an exponentially distributed interval of mean T
 * (AUTOPROF_MEMORY_INTERVAL); an allocation of n < T bytes that crosses k
 * interval ends is a sample weighing k * T bytes, so the estimate per stack
 * is unbiased (E[k] = n / T); an allocation of n >= T bytes is always a
 * sample, of its n bytes exactly. T = 1 records every allocation.
 *
 * Records: SAMPLE records of the attrs alloc-bytes and live-bytes, with
 * PERF_SAMPLE_ADDR (the block) and PERF_SAMPLE_WEIGHT (its size in bytes)
 * added to the file's sample layout; the period is the estimated bytes, and
 * period / weight the estimated objects.
 */
#ifndef AUTOPROF_MEMORY_H
#define AUTOPROF_MEMORY_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"

/* The sample layout of the memory attrs: the file's, with the block and its size. */
#define AP_MEMORY_SAMPLE_TYPE (AUTOPROF_SAMPLE_TYPE | PERF_SAMPLE_ADDR | PERF_SAMPLE_WEIGHT)

/* Per-thread sampling state: the bytes left to the next sample, the PRNG, the guard. */
struct ap_mem_thread {
	int64_t left;  /* bytes before the next sample point; <= 0: a sample is due */
	uint64_t rng;  /* xorshift state; 0 until the thread's first allocation */
	unsigned busy; /* inside the profiler: allocations pass straight through */
};

extern AP_TLS struct ap_mem_thread ap_mem;
/* Allocations are sampled (set at start, cleared at stop); the mean interval. */
extern bool ap_mem_on;
extern uint64_t ap_mem_interval;

/* ---- wrap/alloc.c ---- */

bool alloc__interposed(void);

/* ---- session/memory.c ---- */

/* The attrs alloc-bytes and live-bytes, appended to the file's n events. Returns the new count. */
int memory__file_events(struct writer_event *events, int n);
/* Start sampling allocations (AUTOPROF_MEMORY), after the session's file is open. */
void memory__start(void);
/* Stop sampling; write the live set as live-bytes records (w: the session's file). */
void memory__stop(struct writer *w);
/* The same from a deadly signal's handler: the live set if its lock is free. Async-signal-safe. */
void memory__stop_emergency(struct writer *w);
/* A window's end: its file gets the live set, if the table is free soon. Async-signal-safe. */
void memory__snapshot(struct writer *w);
/* Allocation samples this image recorded (a file with some is not empty). */
uint64_t memory__samples(void);
size_t memory__put_sample(void *buf, size_t cap, uint64_t id, uint32_t pid, uint32_t tid,
			  uint64_t time, uint64_t addr, uint64_t period, const uint64_t *chain,
			  unsigned nr, uint64_t size);
/* The slow path of an allocation of n bytes at p, called from ret: count it down, maybe sample. */
void memory__allocated(void *p, size_t n, uintptr_t ret);

/*
 * An allocation of n bytes at p returned to the program from ret: the fast
 * path (a subtraction) of the Poisson count-down. Not async-signal-safe (a
 * sample unwinds and takes the live table's lock).
 */
static inline void memory__after_alloc(void *p, size_t n, uintptr_t ret)
{
	int64_t s = n ? (int64_t)n : 1;

	if (!p || ap_mem.busy)
		return;
	if ((uint64_t)s < ap_mem_interval && (ap_mem.left -= s) > 0)
		return;
	memory__allocated(p, n, ret);
}

/* A sampled block of the live table. */
struct live_block {
	uint64_t addr, size, weight; /* weight: the estimated bytes it stands for */
	uint32_t stack;		     /* its stack's id in the stack table, 0: unknown */
	uint32_t pad;
};

/*
 * The block at p leaves the program (free, or realloc before the real call):
 * take it out of the live table into *b if it was sampled. Returns whether it
 * was. Not async-signal-safe.
 */
bool memory__take(void *p, struct live_block *b);
/* Put back a block memory__take() took (the realloc that would free it failed). */
void memory__put_back(const struct live_block *b);

/* ---- session/live.c ---- */

int live__init(void);
uint32_t live__stack_id(const uint64_t *chain, unsigned nr);
void live__insert(const struct live_block *b);
bool live__take(uint64_t addr, struct live_block *out);
int live__write(struct writer *w, uint64_t id, uint32_t pid, uint64_t time, uint64_t *blocks,
		uint64_t *bytes, bool wait);
void live__lock_all(void);
void live__unlock_all(void);
uint64_t live__untracked(void);
uint64_t live__footprint(void);

/* live.c's filter: a count of sampled live blocks per hash of their address. */
#define AP_LIVE_FILTER_BITS 20
extern uint32_t *ap_live_filter;

static inline uint32_t live__filter_index(uint64_t addr)
{
	return (uint32_t)(((addr >> 4) * 0x9E3779B97F4A7C15ULL) >> (64 - AP_LIVE_FILTER_BITS));
}

/*
 * Might the block at p be a sampled one still live? The free path's test, a
 * few loads, without a lock: a block is in the filter before its address
 * reaches the program, so any free of it sees it there. False positives only.
 */
static inline bool memory__maybe_sampled(void *p)
{
	return p && ap_live_filter && !ap_mem.busy &&
	       __atomic_load_n(&ap_live_filter[live__filter_index((uintptr_t)p)], __ATOMIC_RELAXED);
}

#endif /* AUTOPROF_MEMORY_H */
