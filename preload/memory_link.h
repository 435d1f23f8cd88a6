/* SPDX-License-Identifier: MIT */
/*
 * memory_link.h - what the two libraries share: libautoprof.so (the session:
 * the sampling of allocations, the live table, the file) and
 * libautoprof-memory.so (preload/memlib/: malloc & co interposed), which is
 * preloaded beside it only to profile memory (AUTOPROF_MEMORY, --memory), so
 * that a run without memory profiling leaves the program's malloc and free
 * bound to the allocator's.
 *
 * The link: libautoprof-memory.so exports AP_MEMORY_LINK_SYM, which
 * libautoprof.so finds with dlsym(RTLD_DEFAULT) when memory is to be
 * profiled, hands its slow paths (struct ap_memory_core) and gets the
 * wrappers' controls (struct ap_memory_lib). libautoprof.so exports
 * AP_CORE_SYM, by which the memory library alone sees that libautoprof.so is
 * missing (and says so). Neither library names the other as DT_NEEDED: an
 * object loaded only as a dependency comes after libc in the lookup order,
 * so both are named in LD_PRELOAD. The symbols' _1 is the link's version: a
 * pair of libraries of different builds does not link.
 */
#ifndef AUTOPROF_MEMORY_LINK_H
#define AUTOPROF_MEMORY_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AP_MEMORY_LIB_NAME "libautoprof-memory.so"
#define AP_MEMORY_LINK_SYM "__autoprof_memory_link_1"
#define AP_CORE_SYM	   "__autoprof_core_1"

/*
 * Per-thread sampling state (libautoprof.so's thread-local ap_mem): the
 * bytes left to the next sample, the PRNG, the guard. While the guard is up
 * (busy), left is parked at INT64_MAX (its value kept in held), so that
 * allocations pass straight through the wrappers' fast path, uncounted.
 */
struct ap_mem_thread {
	int64_t left;  /* bytes before the next sample point; <= 0: a sample is due */
	uint64_t rng;  /* xorshift state; 0 until the thread's first sampled allocation */
	unsigned busy; /* inside the profiler: allocations pass straight through */
	int64_t held;  /* left, while busy */
	/* libautoprof.so's alone: the intervals drawn and the big blocks' bytes, so that drawn -
	 * left is the bytes the thread allocated while sampling; its samples' estimated bytes */
	int64_t drawn;
	uint64_t sampled;
};

/* A sampled block of the live table. */
struct live_block {
	uint64_t addr, size, weight; /* weight: the estimated bytes it stands for */
	uint32_t stack;		     /* its stack's id in the stack table, 0: unknown */
	uint32_t owner; /* the process image line that sampled it (live__own()): 0 until inserted */
};

/* libautoprof.so's side, for the wrappers' slow paths (memory.h tells each). */
struct ap_memory_core {
	void (*allocated)(void *p, size_t n, uintptr_t ret);
	bool (*take)(void *p, struct live_block *b);
	void (*put_back)(const struct live_block *b);
	void (*filter_pin)(uint64_t addr, uint64_t len);
	/* &ap_mem less the thread pointer: the same in every thread (initial-exec TLS) */
	intptr_t mem_tpoff;
};

/* libautoprof-memory.so's side: the wrappers' controls. */
struct ap_memory_lib {
	/* Do the program's malloc and free reach the wrappers? Not async-signal-safe. */
	bool (*interposed)(void);
	/* Sample with mean interval and the live filter (on), or stop. Async-signal-safe when !on.
	 */
	void (*sampling)(bool on, uint64_t interval, const uint64_t *filter);
	/* The calling thread's bytes allocated while not sampling since the last call (or its
	 * first allocation); the count starts again. Not async-signal-safe. */
	uint64_t (*idle_take)(void);
};

/* AP_MEMORY_LINK_SYM's type: keep core (static), get the controls. */
typedef const struct ap_memory_lib *ap_memory_link_fn(const struct ap_memory_core *core);

/*
 * The live filter: one bit per 16-byte address modulo 1 MiB (2^16 bits,
 * 8 KiB), set while some sampled live block is there (live.c keeps the
 * counts behind the bits). Not a hash: neighbouring blocks share a cache
 * line of it, so that the frees' lookups follow the program's locality and
 * do not push its data out of the cache. The free path's test is a load of
 * it, without a lock: a block's bit is set before its address reaches the
 * program, so any free of it sees it. False positives only.
 */
#define AP_LIVE_FILTER_BITS 16

static inline uint32_t live__filter_index(uint64_t addr)
{
	return (uint32_t)(addr >> 4) & ((1U << AP_LIVE_FILTER_BITS) - 1);
}

/* Is addr's bit set in filter f? A load. */
static inline bool live__filter_has(const uint64_t *f, uint64_t addr)
{
	uint32_t i = live__filter_index(addr);

	return (__atomic_load_n(&f[i >> 6], __ATOMIC_RELAXED) >> (i & 63)) & 1;
}

#endif /* AUTOPROF_MEMORY_LINK_H */
