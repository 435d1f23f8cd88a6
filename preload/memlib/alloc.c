/* SPDX-License-Identifier: MIT */
/*
 * alloc.c - the allocator's functions, interposed for AUTOPROF_MEMORY (in
 * libautoprof-memory.so, preloaded for memory profiles only): malloc, calloc,
 * realloc, reallocarray, free, posix_memalign, aligned_alloc, memalign,
 * valloc, pvalloc, malloc_usable_size, and glibc's __libc_malloc & co that
 * some programs call directly. C++'s operator new and delete: cxx.c (which
 * reaches these through libstdc++'s, or counts an allocator's own).
 *
 * Each calls the next definition in the lookup order (dlsym RTLD_NEXT: libc's,
 * or jemalloc's or tcmalloc's when the program links one), found at the first
 * call. dlsym itself allocates (its error buffer): while this thread looks
 * the functions up, allocations come from a small static arena, whose blocks
 * free, realloc and malloc_usable_size recognise (and never pass on).
 *
 * The fast paths, written for sampling: malloc and calloc a test of the size
 * and a thread-local subtraction (libautoprof.so's ap_mem, at its offset from
 * the thread pointer), free a test of the live filter's bit, then a tail call
 * of the real function, without a frame of their own. None tests whether
 * sampling is on: while it is not (before the start, after the stop, without
 * libautoprof.so) the count is idle_count (parked at its maximum at a thread's
 * first allocation) and the filter off_filter (the arena's bits only), and the
 * same instructions pass the calls through. The rest (a sample due, a block
 * maybe sampled, the first calls, big blocks) is in functions of their own.
 * What the fast paths read shares one cache line (struct real_alloc).
 * Contents, sizes and alignment are the real allocator's; errno the real call's.
 */
#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <string.h>

#include "alloc.h"

static void free_first(void *p);

uint64_t off_filter[(1U << AP_LIVE_FILTER_BITS) / 64];
__thread __attribute__((tls_model("initial-exec"))) struct ap_mem_thread idle_count;
__thread __attribute__((tls_model("initial-exec"))) uint8_t reach_probe;

struct real_alloc real __attribute__((aligned(64))) = {
    .filter = off_filter, .interval = UINT64_MAX, .free = free_first};
static int resolved; /* 0, 1 while a thread looks them up, 2 when done; atomic */
static __thread __attribute__((tls_model("initial-exec"))) bool resolving;
static __thread __attribute__((tls_model("initial-exec"))) bool probe_seen;
static intptr_t idle_tpoff; /* idle_count's offset from the thread pointer (at the lookup) */

/* libautoprof.so's slow paths (set at the link, before sampling starts), and its live filter. */
const struct ap_memory_core *core;
static const uint64_t *live_filter; /* atomic: set at the first start */

/*
 * The bootstrap arena: blocks of [size_t size, pad, data...], 16-byte aligned.
 * glibc 2.36's dlsym takes nothing from it when the functions are found (a
 * lookup that fails takes its message). Each block's bits are set in
 * off_filter before it is handed out, and in the live filter: by arena_alloc
 * once the filter exists, or at the first start for the earlier ones; both
 * sides' sequentially consistent accesses make one of them see the other.
 */
#define ARENA_BYTES (64 * 1024)
static char arena[ARENA_BYTES] __attribute__((aligned(16)));
static size_t arena_used; /* atomic */

static inline bool in_arena(const void *p)
{
	return (uintptr_t)p - (uintptr_t)arena < ARENA_BYTES;
}

bool alloc__in_arena(const void *p)
{
	return in_arena(p);
}

/* Set the bits of [addr, addr + len) in off_filter (for good). */
static void off_pin(uint64_t addr, uint64_t len)
{
	for (uint64_t a = addr & ~15ULL; a < addr + len; a += 16) {
		uint32_t i = live__filter_index(a);

		__atomic_fetch_or(&off_filter[i >> 6], 1ULL << (i & 63), __ATOMIC_SEQ_CST);
	}
}

/* A block of the arena (zeroed: it was never used), or NULL when it is full. */
static void *arena_alloc(size_t n, size_t align)
{
	size_t need, at, old;
	const uint64_t *f;

	if (align < 16)
		align = 16;
	if (n > ARENA_BYTES || align > 4096)
		return NULL;
	need = ((n + 15) & ~(size_t)15) + align;
	old = __atomic_fetch_add(&arena_used, need, __ATOMIC_SEQ_CST);
	if (old + need > ARENA_BYTES)
		return NULL;
	at = (((size_t)(arena + old) + 16 + align - 1) & ~(align - 1)) - (size_t)arena;
	memcpy(arena + at - 16, &n, sizeof(n));
	off_pin((uintptr_t)arena + old, need);
	f = __atomic_load_n(&live_filter, __ATOMIC_SEQ_CST);
	if (f)
		core->filter_pin((uintptr_t)arena + old, need);
	return arena + at;
}

static size_t arena_size(const void *p)
{
	size_t n;

	memcpy(&n, (const char *)p - 16, sizeof(n));
	return n;
}

#define LOOK(field, name) real.field = (__typeof__(real.field))dlsym(RTLD_NEXT, name)

/*
 * Find the real functions once. Another thread that calls while one looks
 * them up waits; the looking thread's own calls (from dlsym) get the arena.
 */
void alloc__resolve(void)
{
	void (*free_fn)(void *);

	if (!alloc__once(&resolved, resolving))
		return;
	resolving = true;
	LOOK(malloc, "malloc");
	LOOK(calloc, "calloc");
	LOOK(realloc, "realloc");
	free_fn = (void (*)(void *))dlsym(RTLD_NEXT, "free");
	if (free_fn) /* never NULL: free calls it without a test */
		__atomic_store_n(&real.free, free_fn, __ATOMIC_RELEASE);
	LOOK(posix_memalign, "posix_memalign");
	LOOK(aligned_alloc, "aligned_alloc");
	LOOK(memalign, "memalign");
	LOOK(valloc, "valloc");
	LOOK(pvalloc, "pvalloc");
	LOOK(usable, "malloc_usable_size");
	LOOK(libc_malloc, "__libc_malloc");
	LOOK(libc_calloc, "__libc_calloc");
	LOOK(libc_realloc, "__libc_realloc");
	LOOK(libc_free, "__libc_free");
	LOOK(libc_memalign, "__libc_memalign");
	LOOK(libc_valloc, "__libc_valloc");
	LOOK(libc_pvalloc, "__libc_pvalloc");
	resolving = false;
	idle_tpoff = (intptr_t)((char *)&idle_count - (char *)__builtin_thread_pointer());
	__atomic_store_n(&real.mem_tpoff, idle_tpoff, __ATOMIC_SEQ_CST);
	if (real.malloc && real.calloc && real.realloc) /* the fast paths call them untested */
		__atomic_store_n(&real.big1, ALLOC_PROBE_SIZE - 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&resolved, 2, __ATOMIC_RELEASE);
}

/*
 * At a wrapper's start: the real function known, or (while this thread looks
 * them up, from dlsym) the wrapper returns arena_ret.
 */
#define FIRST(fn, arena_ret)                                                                       \
	do {                                                                                       \
		if (__builtin_expect(!real.fn, 0)) {                                               \
			alloc__resolve();                                                          \
			if (!real.fn)                                                              \
				return arena_ret;                                                  \
		}                                                                                  \
	} while (0)

/* Does wrapper k's real function reach another wrapper (which counts its block)? */
static inline bool passes(int k)
{
	int st = k == P_NONE ? 1 : __atomic_load_n(&probe_state[k], __ATOMIC_ACQUIRE);

	return st ? st == 2 : probe__passes(k);
}

static void *do_malloc(void *(*fn)(size_t), size_t n, uintptr_t ret, int k)
{
	void *p;

	if (passes(k))
		return fn(n);
	p = fn(n);

	counted(p, n, ret);
	return p;
}

/* malloc's rare cases: the lookup not done, the probe, malloc(0), a block of at least the interval.
 */
static __attribute__((noinline)) void *malloc_slow(size_t n, uintptr_t ret)
{
	if (n == ALLOC_PROBE_SIZE) {
		probe_seen = true;
		errno = ENOMEM;
		return NULL; /* as any allocator answers */
	}
	FIRST(malloc, arena_alloc(n, 16));
	return do_malloc(real.malloc, n, ret, P_NONE);
}

enum { DUE_MALLOC, DUE_CALLOC, DUE_REALLOC };

/*
 * A sample is due (a fast path counted the bytes down already): the real
 * call (malloc(n), calloc(n, size) or realloc(p, n)), then the sample; a
 * call that fails leaves the count due (the next allocation is the sample).
 * cxx.c's probe: noted only.
 * Not sampling: the thread's first due on idle_count (its bytes counted), parked then.
 */
static __attribute__((noinline)) void *sample_due(int fn, void *p, size_t n, size_t size,
						  uintptr_t ret)
{
	void *q = fn == DUE_MALLOC   ? real.malloc(n)
		  : fn == DUE_CALLOC ? real.calloc(n, size)
				     : real.realloc(p, n);

	sampled_due(q, fn == DUE_CALLOC ? n * size : n, ret,
		    false); /* (a probe's count restored after) */
	return q;
}

/*
 * The fast path (n from 1 to below the interval, the lookup done): a
 * thread-local subtraction, then a tail call of the real malloc. No frame
 * of its own.
 */
AP_API AP_FAST void *malloc(size_t n)
{
	if (__builtin_expect(n - 1 >= __atomic_load_n(&real.big1, __ATOMIC_RELAXED), 0))
		return malloc_slow(n, RET);
	if (__builtin_expect(count_down((int64_t)n), 0))
		return sample_due(DUE_MALLOC, NULL, n, 0, RET);
	return real.malloc(n);
}

/* calloc's work for both names: sampled as n * size bytes (the real call refused an overflow). */
static void *do_calloc(void *(*fn)(size_t, size_t), size_t n, size_t size, uintptr_t ret, int k)
{
	void *p;

	if (passes(k))
		return fn(n, size);
	p = fn(n, size);

	counted(p, n * size, ret);
	return p;
}

/* calloc's rare cases: as malloc's, and an overflow (the real call refuses it). */
static __attribute__((noinline)) void *calloc_slow(size_t n, size_t size, uintptr_t ret)
{
	FIRST(calloc, size && n > SIZE_MAX / size ? NULL : arena_alloc(n * size, 16));
	return do_calloc(real.calloc, n, size, ret, P_NONE);
}

/* malloc's fast path, for n * size bytes. */
AP_API AP_FAST void *calloc(size_t n, size_t size)
{
	size_t s;

	if (__builtin_expect(__builtin_mul_overflow(n, size, &s) ||
				 s - 1 >= __atomic_load_n(&real.big1, __ATOMIC_RELAXED),
			     0))
		return calloc_slow(n, size, RET);
	if (__builtin_expect(count_down((int64_t)s), 0))
		return sample_due(DUE_CALLOC, NULL, n, size, RET);
	return real.calloc(n, size);
}

/* A block of the arena moved to the real allocator (the arena's is never freed). */
static __attribute__((noinline)) void *arena_realloc(void *p, size_t n)
{
	size_t old = arena_size(p);
	void *q = malloc(n);

	if (q)
		memcpy(q, p, old < n ? old : n);
	return q;
}

/*
 * free's rare cases (the filter's bit is set): an arena's block, NULL, or,
 * while sampling, a block maybe sampled: out of the live table first, so
 * that no other thread can be given its address while it is still there;
 * then fn frees it.
 */
static __attribute__((noinline)) void free_slow(void (*fn)(void *), void *p)
{
	struct live_block b;

	if (in_arena(p))
		return;
	if (p && __atomic_load_n(&real.filter, __ATOMIC_RELAXED) != off_filter)
		core->take(p, &b);
	fn(p);
}

/* free before the lookup: look the functions up, then free (never the arena's: free tests it). */
static void free_first(void *p)
{
	alloc__resolve();
	if (real.free != free_first)
		real.free(p);
}

/* The filter's bit (the arena's blocks have theirs set), then a tail call of the real free. */
AP_API AP_FAST void free(void *p)
{
	const uint64_t *f = __atomic_load_n(&real.filter, __ATOMIC_RELAXED);

	if (__builtin_expect(live__filter_has(f, (uintptr_t)p), 0))
		return free_slow(real.free, p);
	real.free(p);
}

/* realloc's work for both names: p's sampled block goes, q's may come. */
static void *do_realloc(void *(*fn)(void *, size_t), void *p, size_t n, uintptr_t ret, int k)
{
	struct live_block b;
	bool had;
	void *q;

	if (passes(k))
		return fn(p, n);
	had = p && maybe_sampled(p) && core->take(p, &b);
	q = fn(p, n);

	if (__builtin_expect(had, 0) && !q && n)
		core->put_back(&b); /* failed: p is still the program's */
	counted(q, n, ret);
	return q;
}

/* realloc's rare cases: as malloc's, an arena's block, a block maybe sampled. */
static __attribute__((noinline)) void *realloc_slow(void *p, size_t n, uintptr_t ret)
{
	if (p && in_arena(p))
		return arena_realloc(p, n);
	FIRST(realloc, p ? NULL : arena_alloc(n, 16));
	return do_realloc(real.realloc, p, n, ret, P_NONE);
}

/*
 * p's filter bit (the arena's blocks have theirs set) and malloc's count,
 * then a tail call of the real realloc.
 */
AP_API AP_FAST void *realloc(void *p, size_t n)
{
	const uint64_t *f = __atomic_load_n(&real.filter, __ATOMIC_RELAXED);

	if (__builtin_expect(n - 1 >= __atomic_load_n(&real.big1, __ATOMIC_RELAXED), 0) ||
	    __builtin_expect(p && live__filter_has(f, (uintptr_t)p), 0))
		return realloc_slow(p, n, RET);
	if (__builtin_expect(count_down((int64_t)n), 0))
		return sample_due(DUE_REALLOC, p, n, 0, RET);
	return real.realloc(p, n);
}

AP_API void *reallocarray(void *p, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size) {
		errno = ENOMEM;
		return NULL;
	}
	if (p && in_arena(p))
		return arena_realloc(p, n * size);
	FIRST(realloc, p ? NULL : arena_alloc(n * size, 16));
	return do_realloc(real.realloc, p, n * size, RET, P_NONE);
}

AP_API int posix_memalign(void **out, size_t align, size_t n)
{
	int err;

	if (__builtin_expect(!real.posix_memalign, 0)) {
		alloc__resolve();
		if (!real.posix_memalign) {
			*out = arena_alloc(n, align);
			return *out ? 0 : ENOMEM;
		}
	}
	if (passes(P_POSIX_MEMALIGN))
		return real.posix_memalign(out, align, n);
	err = real.posix_memalign(out, align, n);
	if (!err)
		counted(*out, n, RET);
	return err;
}

/* The aligned allocators: fn(align, n), sampled as n bytes. */
static void *do_aligned(void *(*fn)(size_t, size_t), size_t align, size_t n, uintptr_t ret, int k)
{
	void *p;

	if (passes(k))
		return fn(align, n);
	p = fn(align, n);

	counted(p, n, ret);
	return p;
}

AP_API void *aligned_alloc(size_t align, size_t n)
{
	FIRST(aligned_alloc, arena_alloc(n, align));
	return do_aligned(real.aligned_alloc, align, n, RET, P_ALIGNED_ALLOC);
}

AP_API void *memalign(size_t align, size_t n)
{
	FIRST(memalign, arena_alloc(n, align));
	return do_aligned(real.memalign, align, n, RET, P_MEMALIGN);
}

AP_API void *valloc(size_t n)
{
	FIRST(valloc, arena_alloc(n, 4096));
	return do_malloc(real.valloc, n, RET, P_VALLOC);
}

AP_API void *pvalloc(size_t n)
{
	FIRST(pvalloc, arena_alloc((n + 4095) & ~(size_t)4095, 4096));
	return do_malloc(real.pvalloc, n, RET, P_PVALLOC);
}

AP_API size_t malloc_usable_size(void *p)
{
	if (p && in_arena(p))
		return arena_size(p);
	FIRST(usable, (size_t)0);
	return real.usable(p);
}

/* glibc's own names, which some programs call directly: sampled the same way. */

AP_API void *__libc_malloc(size_t n)
{
	FIRST(libc_malloc, arena_alloc(n, 16));
	return do_malloc(real.libc_malloc, n, RET, P_LIBC_MALLOC);
}

AP_API void *__libc_calloc(size_t n, size_t size)
{
	FIRST(libc_calloc, size && n > SIZE_MAX / size ? NULL : arena_alloc(n * size, 16));
	return do_calloc(real.libc_calloc, n, size, RET, P_LIBC_CALLOC);
}

AP_API void *__libc_realloc(void *p, size_t n)
{
	if (p && in_arena(p))
		return arena_realloc(p, n);
	FIRST(libc_realloc, p ? NULL : arena_alloc(n, 16));
	return do_realloc(real.libc_realloc, p, n, RET, P_LIBC_REALLOC);
}

AP_API void __libc_free(void *p)
{
	if (__builtin_expect(in_arena(p), 0))
		return;
	FIRST(libc_free, (void)0);
	if (__builtin_expect(maybe_sampled(p), 0))
		return free_slow(real.libc_free, p);
	real.libc_free(p);
}

AP_API void *__libc_memalign(size_t align, size_t n)
{
	FIRST(libc_memalign, arena_alloc(n, align));
	return do_aligned(real.libc_memalign, align, n, RET, P_LIBC_MEMALIGN);
}

AP_API void *__libc_valloc(size_t n)
{
	FIRST(libc_valloc, arena_alloc(n, 4096));
	return do_malloc(real.libc_valloc, n, RET, P_LIBC_VALLOC);
}

AP_API void *__libc_pvalloc(size_t n)
{
	FIRST(libc_pvalloc, arena_alloc((n + 4095) & ~(size_t)4095, 4096));
	return do_malloc(real.libc_pvalloc, n, RET, P_LIBC_PVALLOC);
}

void alloc__link(const struct ap_memory_core *c)
{
	__atomic_store_n(&core, c, __ATOMIC_SEQ_CST);
}

/*
 * Sample allocations of mean interval (on), with the live filter and libautoprof.so's count,
 * or stop (on false: idle_count and off_filter again). The first start pins the arena's blocks
 * in the live filter (free then sends them to free_slow). The link must be made. Stores only
 * when !on: async-signal-safe then.
 */
void alloc__sampling(bool on, uint64_t interval, const uint64_t *filter)
{
	if (!on) { /* the slow paths stop counting first (sampling()) */
		__atomic_store_n(&real.interval, UINT64_MAX, __ATOMIC_SEQ_CST);
		__atomic_store_n(&real.filter, off_filter, __ATOMIC_SEQ_CST);
		__atomic_store_n(&real.mem_tpoff, idle_tpoff, __ATOMIC_SEQ_CST);
		__atomic_store_n(&real.big1, ALLOC_PROBE_SIZE - 1, __ATOMIC_SEQ_CST);
		return;
	}
	alloc__resolve();
	if (!core || !filter || !real.malloc || !real.calloc || !real.realloc)
		return; /* the fast paths call them untested */
	if (!__atomic_load_n(&live_filter, __ATOMIC_SEQ_CST)) {
		/* the arena's blocks handed out before the filter was there */
		size_t used;

		__atomic_store_n(&live_filter, filter, __ATOMIC_SEQ_CST);
		used = __atomic_load_n(&arena_used, __ATOMIC_SEQ_CST);
		core->filter_pin((uintptr_t)arena, used < ARENA_BYTES ? used : ARENA_BYTES);
	}
	/* the filter before the interval: a block sampled once sampling() sees it, freed at once
	 * by another thread, is freed through the filter (not left live: a false leak) */
	__atomic_store_n(&real.filter, filter, __ATOMIC_SEQ_CST);
	__atomic_store_n(&real.mem_tpoff, core->mem_tpoff, __ATOMIC_SEQ_CST);
	__atomic_store_n(&real.interval, interval, __ATOMIC_SEQ_CST);
	/* malloc's threshold less 1: the probe's size, or the mean interval; n - 1 >= big1 sends
	 * malloc(0) to the slow path too */
	__atomic_store_n(&real.big1,
			 (interval < ALLOC_PROBE_SIZE ? interval : ALLOC_PROBE_SIZE) - 1,
			 __ATOMIC_SEQ_CST);
}

bool alloc__probe_seen(void)
{
	return __atomic_exchange_n(&probe_seen, false, __ATOMIC_RELAXED);
}
