/* SPDX-License-Identifier: MIT */
/*
 * alloc.h - what alloc.c's fast paths read, shared with cxx.c's (C++'s
 * operator new and delete): the real functions' cache line, the thread's
 * count of bytes to its next sample, the live filter's test. Hidden: the
 * library's own code reaches them directly, not through the GOT.
 */
#ifndef AUTOPROF_MEMLIB_ALLOC_H
#define AUTOPROF_MEMLIB_ALLOC_H

#include <sched.h>

#include "memlib.h"

#pragma GCC visibility push(hidden)

/* The hot wrappers: no frame pointer (the library is built with them), no frame at all. */
#define AP_FAST __attribute__((optimize("omit-frame-pointer")))

/*
 * The real functions and what the fast paths read, together (read-mostly:
 * written at the lookup, at the link, at start and at stop only; the first
 * cache line holds what malloc and free read).
 */
struct real_alloc {
	const uint64_t *filter; /* the live filter while sampling, else off_filter: never NULL */
	uint64_t big1; /* malloc(n) with n - 1 >= big1 takes the slow path: 0 until the lookup */
	intptr_t
	    mem_tpoff; /* the count's offset from the thread pointer: ap_mem's or idle_count's */
	uint64_t interval; /* the mean interval while sampling, else UINT64_MAX */
	void *(*malloc)(size_t);
	void (*free)(void *);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	int (*posix_memalign)(void **, size_t, size_t);
	void *(*aligned_alloc)(size_t, size_t);
	void *(*memalign)(size_t, size_t);
	void *(*valloc)(size_t);
	void *(*pvalloc)(size_t);
	size_t (*usable)(void *);
	void *(*libc_malloc)(size_t);
	void *(*libc_calloc)(size_t, size_t);
	void *(*libc_realloc)(void *, size_t);
	void (*libc_free)(void *);
	void *(*libc_memalign)(size_t, size_t);
	void *(*libc_valloc)(size_t);
	void *(*libc_pvalloc)(size_t);
};

extern struct real_alloc real;
/* The filter while not sampling: the arena's bits only (free sends its blocks to free_slow). */
extern uint64_t off_filter[];
/* The count while not sampling: the fast paths subtract from it, to no end. */
extern __thread __attribute__((tls_model("initial-exec"))) struct ap_mem_thread idle_count;
/* 1 while cxx.c probes whether an operator new reaches these wrappers, 3 once one saw it. */
extern __thread __attribute__((tls_model("initial-exec"))) uint8_t reach_probe;
/* libautoprof.so's slow paths (set at the link, before sampling starts). */
extern const struct ap_memory_core *core;

/*
 * The thread's count of bytes to its next sample: while sampling
 * libautoprof.so's ap_mem, at the offset from the thread pointer it gave at
 * the link (initial-exec TLS: every thread's offset), else idle_count.
 */
#ifdef __SEG_FS
typedef __seg_fs int64_t tls_int64;
#define LEFT (*(tls_int64 *)(real.mem_tpoff + offsetof(struct ap_mem_thread, left)))
#else
#define LEFT                                                                                       \
	(*(int64_t *)((char *)__builtin_thread_pointer() + real.mem_tpoff +                        \
		      offsetof(struct ap_mem_thread, left)))
#endif

/* LEFT -= n; is a sample due (LEFT <= n before)? One subtraction in memory where we can. */
static inline __attribute__((always_inline)) bool count_down(int64_t n)
{
#if defined(__SEG_FS) && defined(__GCC_ASM_FLAG_OUTPUTS__)
	bool due;

	__asm__("subq %2, %0" : "+m"(LEFT), "=@ccle"(due) : "er"(n));
	return due;
#else
	return (LEFT -= n) <= 0;
#endif
}

/* Sampling (alloc__sampling(true) to (false)): the slow paths count; acquire: the filter too. */
static inline bool sampling(void)
{
	return __atomic_load_n(&real.interval, __ATOMIC_ACQUIRE) != UINT64_MAX;
}

#define RET ((uintptr_t)__builtin_return_address(0))

/*
 * A block of n bytes at p is the program's (from ret): while sampling, count
 * it down (a thread-local subtraction), the slow path when a sample is due,
 * n is at least the interval, or the thread's count is not set up yet. A
 * probe's block (reach_probe) is only noted.
 * Keeps errno.
 */
static inline __attribute__((always_inline)) void counted(void *p, size_t n, uintptr_t ret)
{
	uint64_t s = n ? n : 1;

	if (__builtin_expect(reach_probe, 0)) {
		reach_probe = 3; /* the probe's block: seen, not counted */
		return;
	}
	if (__builtin_expect(!p, 0) || !sampling()) {
		idle_count.left -= p ? (int64_t)s : 0; /* the bytes before sampling (idle_take) */
		return;
	}
	if (__builtin_expect(s >= __atomic_load_n(&real.interval, __ATOMIC_RELAXED), 0) ||
	    __builtin_expect(count_down((int64_t)s), 0))
		core->allocated(p, n, ret);
}

/*
 * A slow path's block of n bytes at p (from ret): one the fast path did not
 * count (counted: true) is counted now; one whose sample came due on the
 * fast path's count: a probe's is only noted; while not sampling, the
 * thread's first due on idle_count parks the count (with what it counted,
 * <= 0); else it is the sample. Keeps errno.
 */
static inline __attribute__((always_inline)) void sampled_due(void *p, size_t n, uintptr_t ret,
							      bool count)
{
	if (count)
		counted(p, n, ret);
	else if (__builtin_expect(reach_probe, 0))
		reach_probe = 3;
	else if (!sampling())
		idle_count.left = (int64_t)((uint64_t)idle_count.left + INT64_MAX);
	else if (p)
		core->allocated(p, n, ret);
}

/*
 * A probe: does a real function reach these wrappers? Between probe_begin and probe_end the
 * thread's count is 0, so that any allocation the wrappers see takes a slow path, which notes
 * reach_probe (3). Nested probes (a probe's call reaching a wrapper's first call, which probes
 * in turn) keep the outer one's state: the count and reach_probe are restored.
 */
struct probe {
	int64_t *left;
	int64_t saved;
	uint8_t was;
};

/* Start a probe; false when the count is not set up (alloc.c's lookup not done). */
static inline bool probe_begin(struct probe *pr)
{
	intptr_t tpoff = __atomic_load_n(&real.mem_tpoff, __ATOMIC_SEQ_CST);

	if (!tpoff)
		return false;
	pr->left = (int64_t *)((char *)__builtin_thread_pointer() + tpoff +
			       offsetof(struct ap_mem_thread, left));
	pr->saved = *pr->left;
	pr->was = reach_probe;
	reach_probe = 1;
	*pr->left = 0;
	return true;
}

/* End a probe: did a wrapper see an allocation since probe_begin? */
static inline bool probe_end(const struct probe *pr)
{
	bool hit = reach_probe == 3;

	*pr->left = pr->saved;
	reach_probe = pr->was ? (uint8_t)(pr->was | (hit ? 2 : 0)) : 0;
	return hit;
}

/* Might the block at p be a sampled one still live? A filter load, without a lock. */
static inline __attribute__((always_inline)) bool maybe_sampled(const void *p)
{
	const uint64_t *f = __atomic_load_n(&real.filter, __ATOMIC_RELAXED);

	return f != off_filter && live__filter_has(f, (uintptr_t)p);
}

/*
 * A lookup made once (alloc.c's functions, cxx.c's forms): true when the
 * calling thread is to make it now (it then sets *state to 2 with release);
 * false when it is made, when this thread is making it (busy: its lookup's
 * own calls), or after waiting for another thread's.
 */
static inline bool alloc__once(int *state, bool busy)
{
	int idle = 0;

	if (__atomic_load_n(state, __ATOMIC_ACQUIRE) == 2 || busy)
		return false;
	if (!__atomic_compare_exchange_n(state, &idle, 1, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		while (__atomic_load_n(state, __ATOMIC_ACQUIRE) != 2)
			sched_yield();
		return false;
	}
	return true;
}

/*
 * alloc.c's wrappers whose real function may reach another wrapper (tcmalloc's
 * posix_memalign, valloc and pvalloc call its tc_memalign through the PLT:
 * counted there, by allocx.c, not here too). Asked once each, at its first
 * call, with a probe of 1 byte; not malloc, calloc and realloc (no
 * allocator's reach another wrapper; their fast paths stay as they are).
 */
enum {
	P_POSIX_MEMALIGN,
	P_ALIGNED_ALLOC,
	P_MEMALIGN,
	P_VALLOC,
	P_PVALLOC,
	P_LIBC_MALLOC,
	P_LIBC_CALLOC,
	P_LIBC_REALLOC,
	P_LIBC_MEMALIGN,
	P_LIBC_VALLOC,
	P_LIBC_PVALLOC,
	NR_PROBED,
	P_NONE = NR_PROBED
};
/* Each one's answer: 0 not asked yet, 1 counted by the wrapper, 2 passed on; atomic. */
extern uint8_t probe_state[NR_PROBED];
/* Ask wrapper k whether its real function reaches another wrapper (once: the answer is kept in
 * probe_state[k]). Not async-signal-safe. */
bool probe__passes(int k);

/* Is p a block of the bootstrap arena (never passed on to the real allocator)? */
bool alloc__in_arena(const void *p);

#pragma GCC visibility pop

#endif /* AUTOPROF_MEMLIB_ALLOC_H */
