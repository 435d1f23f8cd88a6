/* SPDX-License-Identifier: MIT */
/*
 * allocx.c - the allocators' own entry points beyond malloc & co, interposed
 * for memory profiles: jemalloc's mallocx, rallocx, xallocx, dallocx and
 * sdallocx; tcmalloc's (gperftools) tc_malloc & co, tc_new & co, tc_free &
 * co and tc_delete & co; cfree (tcmalloc's; glibc's old compat symbol); and
 * C23's free_sized and free_aligned_sized. An allocator defines them beside
 * malloc, and the program's calls of them reach the allocator's code, never
 * its malloc or free: without these wrappers a block that mallocx gave went
 * unseen, and a sampled block that dallocx or tc_free freed stayed live for
 * ever (a false leak).
 *
 * Each entry point calls the first definition not ours in the loaded objects
 * (the allocator's, looked up at its first call). An allocating one that
 * reaches alloc.c's wrappers (a probe sees it: a shim over malloc) only
 * passes the call on (PASS); else it counts and samples its block as malloc
 * does (OWN). A freeing one takes a block maybe sampled out of the live
 * table before the real one frees it, as free does. Defined nowhere (a call
 * that no loaded object could have been linked against: a weak reference),
 * each does what its name says with the C allocator's functions (real.*),
 * counted as OWN.
 *
 * Fast paths as cxx.c's: a byte of state, the thread-local count or the
 * filter's bit, then a tail call. Sizes counted: the size asked for (mallocx
 * whatever its flags; calloc's n * size), rallocx's and tc_realloc's new
 * size (the old block out), xallocx's size in place (at most size + extra;
 * a failed one leaves the block as it was).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../dynsym.h"
#include "alloc.h"
#include "allocx.h"

#define NAME(id, name, shape) name,
static const char *const names[NR_ENTRIES] = {ENTRIES(NAME)};
#define SHAPE(id, name, shape) shape,
static const uint8_t shapes[NR_ENTRIES] = {ENTRIES(SHAPE)};

/* An entry's state: not looked up, passed on (its real one reaches alloc.c's), counted here. */
enum { UNSEEN, PASS, OWN };

static struct {
	uint8_t state[NR_ENTRIES]; /* atomic; set after fn (release) */
	void *fn[NR_ENTRIES];
} ax __attribute__((aligned(64)));

typedef uintptr_t word;

/* Call f, of shape s, with its words (no cleanup: a throwing new's exception passes through). */
static inline __attribute__((always_inline)) word call_with(void *f, int s, word a, word b, word c,
							    word d)
{
	switch (s) {
	case A_N:
		return (word)((void *(*)(size_t))f)(a);
	case A_NF:
		return (word)((void *(*)(size_t, int))f)(a, (int)b);
	case A_NM:
	case A_AN:
	case A_NX:
		return (word)((void *(*)(word, word))f)(a, b);
	case A_NXY:
		return (word)((void *(*)(word, word, word))f)(a, b, c);
	case A_PM:
		return (word)(unsigned)((int (*)(void **, size_t, size_t))f)((void **)a, b, c);
	case R_PN:
		return (word)((void *(*)(void *, size_t))f)((void *)a, b);
	case R_PNF:
		return (word)((void *(*)(void *, size_t, int))f)((void *)a, b, (int)c);
	case R_X:
		return (word)((size_t(*)(void *, size_t, size_t, int))f)((void *)a, b, c, (int)d);
	case F_P:
		((void (*)(void *))f)((void *)a);
		return 0;
	case F_PX:
		((void (*)(void *, word))f)((void *)a, b);
		return 0;
	default:
		((void (*)(void *, word, word))f)((void *)a, b, c);
		return 0;
	}
}

/* Call entry i's real function with the words of its shape. */
#define call_real(i, a, b, c, d)                                                                   \
	call_with(__atomic_load_n(&ax.fn[i], __ATOMIC_RELAXED), shapes[i], a, b, c, d)

/* ---- the lookup ---- */

/*
 * Does allocating entry i's real function f (of the object at base) reach
 * alloc.c's wrappers? A block of 1 byte (64-byte aligned where the shape
 * asks), or a resize of the object's own 1-byte block to 2, with the
 * thread's count at 0, so that any allocation the wrappers see takes a slow
 * path, which notes reach_probe; then freed by the object's free. No free
 * there: a shim over the C allocator's, whose calls reach the wrappers.
 */
static bool reaches_wrappers(int i, uintptr_t base)
{
	static const char tag; /* std::nothrow: its address only */
	void *(*omalloc)(size_t) = (void *(*)(size_t))dynsym__in_object("malloc", base);
	void (*ofree)(void *) = (void (*)(void *))dynsym__in_object("free", base);
	int s = shapes[i];
	void *p = NULL, *q = NULL;
	struct probe pr;

	if (!ofree || (s >= R_PN && !omalloc))
		return true;
	if (s >= R_PN && !(p = omalloc(1)))
		return true;
	if (!probe_begin(&pr)) { /* alloc.c's lookup not done (never here): never counted twice */
		ofree(p);
		return true;
	}
	if (s == A_N || s == A_NF || s == A_NX)
		q = (void *)call_real(i, 1, i == TC_NEW_NT || i == TC_NEWARRAY_NT ? (word)&tag : 64,
				      0, 0);
	else if (s == A_NM || s == A_NXY)
		q = (void *)call_real(i, 1, s == A_NXY ? 64 : 1, (word)&tag, 0);
	else if (s == A_AN)
		q = (void *)call_real(i, 64, 1, 0, 0);
	else if (s == A_PM)
		q = call_real(i, (word)&q, 64, 1, 0) ? NULL : q;
	else
		q = (void *)call_real(i, (word)p, 2, 0, 0);
	if (probe_end(&pr))
		s = -1;
	ofree(q ? q : p);
	return s < 0;
}

/*
 * Look entry i up (at its first call; threads that race look it up alike):
 * the first definition not ours, in load order, else the stand-in. Returns
 * its state, or -1 for the thread's own call of the entry while it looks
 * that one up (a probe's), which gets the stand-in.
 */
static __attribute__((noinline)) int resolve(int i)
{
	static __thread __attribute__((tls_model("initial-exec"))) uint64_t resolving; /* bits */
	struct dynsym_def d[4];
	Dl_info self;
	void *f = NULL;
	uintptr_t base = 0;
	int s = OWN, n;

	alloc__resolve();
	if (resolving >> i & 1)
		return -1;
	resolving |= 1ULL << i;
	n = dynsym__all(names[i], d, 4);
	if (dladdr((void *)resolve, &self))
		for (int k = 0; k < n && !f; k++)
			if (d[k].base != (uintptr_t)self.dli_fbase)
				f = (void *)d[k].addr, base = d[k].base;
	__atomic_store_n(&ax.fn[i], f ? f : allocx_emul__fn(i), __ATOMIC_RELEASE);
	if (f && shapes[i] < F_P && shapes[i] != R_X && reaches_wrappers(i, base))
		s = PASS;
	__atomic_store_n(&ax.state[i], s, __ATOMIC_RELEASE);
	resolving &= ~(1ULL << i);
	return s;
}

/* ---- the slow paths ---- */

/* Why a slow path is called: the thread looks the entry up (its stand-in called), a big block
 * (or 0 bytes), a sample due, a resize to count here. */
enum { INNER, BIG, DUE, RESIZE };

/* The block an allocating entry's call gave (r its result), and its size. */
static void *block_of(int i, word r, word a, word b, word c, size_t *n)
{
	switch (shapes[i]) {
	case A_NM:
		*n = a * b;
		return (void *)r;
	case A_AN:
		*n = b;
		return (void *)r;
	case A_PM:
		*n = c;
		return r ? NULL : *(void **)a;
	default:
		*n = a;
		return (void *)r;
	}
}

/* The size an allocating entry asks for (SIZE_MAX: calloc's overflow, a big block). */
static inline __attribute__((always_inline)) size_t asked(int s, word a, word b, word c)
{
	size_t n;

	if (s == A_NM)
		return __builtin_mul_overflow(a, b, &n) ? SIZE_MAX : n;
	return s == A_AN ? b : s == A_PM ? c : a;
}

/*
 * An allocating entry's rare cases (how): BIG or DUE (the count counted
 * down already): the real call, then the block counted or sampled (a
 * probe's: only noted); INNER: the stand-in, not counted.
 */
static __attribute__((noinline)) word alloc_slow(int i, word a, word b, word c, int how,
						 uintptr_t ret)
{
	word r;
	size_t n;
	void *p;

	if (how == INNER) { /* this thread's own call while looking it up */
		if (reach_probe)
			reach_probe = 3; /* a probe's call reached a wrapper */
		return call_with(allocx_emul__fn(i), shapes[i], a, b, c, 0);
	}
	r = call_real(i, a, b, c, 0);
	p = block_of(i, r, a, b, c, &n);
	sampled_due(p, n, ret, how == BIG);
	__asm__ volatile("" ::: "memory"); /* not a tail call: nothing of ours after a throw */
	return r;
}

/* Take p out of the live table when it may be a sampled block (false: not there). */
static bool take(void *p, struct live_block *b)
{
	return p && maybe_sampled(p) && core->take(p, b);
}

/*
 * A resizing entry (rallocx, tc_realloc, xallocx): p's sampled block goes,
 * the new one may come (how: RESIZE or BIG count it here, DUE counted down
 * already). A failed resize leaves p as it was. xallocx's new size: what
 * it gave, at most size + extra, when at least size (else it failed).
 */
static __attribute__((noinline)) word resize_slow(int i, word a, word b, word c, word d, int how,
						  uintptr_t ret)
{
	struct live_block blk;
	bool had;
	word r;
	size_t n = b;
	void *q;

	if (how == INNER) {
		if (reach_probe)
			reach_probe = 3;
		return call_with(allocx_emul__fn(i), shapes[i], a, b, c, d);
	}
	had = take((void *)a, &blk);
	r = call_real(i, a, b, c, d);
	q = (void *)r;
	if (i == XALLOCX) {
		size_t most = b + c < b ? SIZE_MAX : b + c;

		q = r >= b ? (void *)a : NULL;
		n = r < most ? r : most;
	}
	if (had && !q && (i == XALLOCX || b))
		core->put_back(&blk); /* failed: p is still the program's, as it was */
	sampled_due(q, n, ret, how != DUE);
	__asm__ volatile("" ::: "memory");
	return r;
}

/*
 * A freeing entry's rare cases: not looked up yet, or the filter's bit set:
 * an arena's block (never freed), or a block maybe sampled, out of the live
 * table first, as free_slow does.
 */
static __attribute__((noinline)) void free_slow(int i, void *p, word b, word c)
{
	struct live_block blk;

	if (__atomic_load_n(&ax.state[i], __ATOMIC_ACQUIRE) == UNSEEN && resolve(i) < 0) {
		call_with(allocx_emul__fn(i), shapes[i], (word)p, b, c, 0);
		return;
	}
	if (p && alloc__in_arena(p))
		return;
	if (p && __atomic_load_n(&real.filter, __ATOMIC_RELAXED) != off_filter &&
	    live__filter_has(real.filter, (uintptr_t)p))
		core->take(p, &blk);
	call_real(i, (word)p, b, c, 0);
}

/* ---- the wrappers ---- */

/*
 * An allocating entry: pass, a tail call; own, malloc's fast path (a block
 * from 1 byte to below the interval: a thread-local subtraction, then a tail
 * call). Looked up at its first call, then on as the fast path goes (a pass
 * entry's call a tail call: nothing of ours stays on the stack under the
 * real one, whose inner calls the wrappers may count). Arguments: the name,
 * the entry, its return type, parameters, the real call's arguments, and
 * the words a, b, c for the slow path.
 */
#define ALLOC_WRAPPER(name, i, rtype, params, args, a, b, c)                                       \
	static __attribute__((noinline)) rtype name##_first params;                                \
	AP_API AP_FAST rtype name params                                                           \
	{                                                                                          \
		int s = __atomic_load_n(&ax.state[i], __ATOMIC_ACQUIRE);                           \
                                                                                                   \
		if (__builtin_expect(s != PASS, 0)) {                                              \
			size_t k = asked(shapes[i], (word)(a), (word)(b), (word)(c));              \
                                                                                                   \
			if (__builtin_expect(s != OWN, 0))                                         \
				return name##_first args;                                          \
			if (__builtin_expect(                                                      \
				k - 1 >= __atomic_load_n(&real.big1, __ATOMIC_RELAXED), 0))        \
				return (rtype)alloc_slow(i, (word)(a), (word)(b), (word)(c), BIG,  \
							 RET);                                     \
			if (__builtin_expect(count_down((int64_t)k), 0))                           \
				return (rtype)alloc_slow(i, (word)(a), (word)(b), (word)(c), DUE,  \
							 RET);                                     \
		}                                                                                  \
		return ((rtype(*) params)ax.fn[i])args;                                            \
	}                                                                                          \
	/* the first call: looked up, then the wrapper again (a tail call: the caller's frame is   \
	 * the program's) */                                                                       \
	static __attribute__((noinline)) rtype name##_first params                                 \
	{                                                                                          \
		if (resolve(i) < 0)                                                                \
			return (rtype)alloc_slow(i, (word)(a), (word)(b), (word)(c), INNER, RET);  \
		return name args;                                                                  \
	}

ALLOC_WRAPPER(mallocx, MALLOCX, void *, (size_t n, int fl), (n, fl), n, fl, 0)
ALLOC_WRAPPER(tc_malloc, TC_MALLOC, void *, (size_t n), (n), n, 0, 0)
ALLOC_WRAPPER(tc_malloc_skip_new_handler, TC_MALLOC_SKIP, void *, (size_t n), (n), n, 0, 0)
ALLOC_WRAPPER(tc_calloc, TC_CALLOC, void *, (size_t n, size_t m), (n, m), n, m, 0)
ALLOC_WRAPPER(tc_memalign, TC_MEMALIGN, void *, (size_t al, size_t n), (al, n), al, n, 0)
ALLOC_WRAPPER(tc_posix_memalign, TC_POSIX_MEMALIGN, int, (void **o, size_t al, size_t n),
	      (o, al, n), o, al, n)
ALLOC_WRAPPER(__posix_memalign, POSIX_MEMALIGN_, int, (void **o, size_t al, size_t n), (o, al, n),
	      o, al, n)
ALLOC_WRAPPER(tc_valloc, TC_VALLOC, void *, (size_t n), (n), n, 0, 0)
ALLOC_WRAPPER(tc_pvalloc, TC_PVALLOC, void *, (size_t n), (n), n, 0, 0)
ALLOC_WRAPPER(tc_new, TC_NEW, void *, (size_t n), (n), n, 0, 0)
ALLOC_WRAPPER(tc_newarray, TC_NEWARRAY, void *, (size_t n), (n), n, 0, 0)
ALLOC_WRAPPER(tc_new_nothrow, TC_NEW_NT, void *, (size_t n, const void *t), (n, t), n, t, 0)
ALLOC_WRAPPER(tc_newarray_nothrow, TC_NEWARRAY_NT, void *, (size_t n, const void *t), (n, t), n, t,
	      0)
ALLOC_WRAPPER(tc_new_aligned, TC_NEW_AL, void *, (size_t n, size_t al), (n, al), n, al, 0)
ALLOC_WRAPPER(tc_newarray_aligned, TC_NEWARRAY_AL, void *, (size_t n, size_t al), (n, al), n, al, 0)
ALLOC_WRAPPER(tc_new_aligned_nothrow, TC_NEW_AL_NT, void *, (size_t n, size_t al, const void *t),
	      (n, al, t), n, al, t)
ALLOC_WRAPPER(tc_newarray_aligned_nothrow, TC_NEWARRAY_AL_NT, void *,
	      (size_t n, size_t al, const void *t), (n, al, t), n, al, t)

/* A resizing entry (realloc's shape): p's filter bit and malloc's count, then a tail call. */
#define RESIZE_WRAPPER(name, i, params, args, c)                                                   \
	static __attribute__((noinline)) void *name##_first params;                                \
	AP_API AP_FAST void *name params                                                           \
	{                                                                                          \
		int s = __atomic_load_n(&ax.state[i], __ATOMIC_ACQUIRE);                           \
		const uint64_t *f = __atomic_load_n(&real.filter, __ATOMIC_RELAXED);               \
                                                                                                   \
		if (__builtin_expect(s != PASS, 0)) {                                              \
			if (__builtin_expect(s != OWN, 0))                                         \
				return name##_first args;                                          \
			if (__builtin_expect(                                                      \
				n - 1 >= __atomic_load_n(&real.big1, __ATOMIC_RELAXED), 0) ||      \
			    __builtin_expect(p && live__filter_has(f, (uintptr_t)p), 0))           \
				return (void *)resize_slow(i, (word)p, n, (word)(c), 0, BIG, RET); \
			if (__builtin_expect(count_down((int64_t)n), 0))                           \
				return (void *)resize_slow(i, (word)p, n, (word)(c), 0, DUE, RET); \
		}                                                                                  \
		return ((void *(*)params)ax.fn[i])args;                                            \
	}                                                                                          \
	static __attribute__((noinline)) void *name##_first params                                 \
	{                                                                                          \
		if (resolve(i) < 0)                                                                \
			return (void *)resize_slow(i, (word)p, n, (word)(c), 0, INNER, RET);       \
		return name args;                                                                  \
	}

RESIZE_WRAPPER(rallocx, RALLOCX, (void *p, size_t n, int fl), (p, n, fl), fl)
RESIZE_WRAPPER(tc_realloc, TC_REALLOC, (void *p, size_t n), (p, n), 0)

/* In place, rare: always the slow path (its size is known after the call). */
AP_API size_t xallocx(void *p, size_t size, size_t extra, int fl)
{
	int s = __atomic_load_n(&ax.state[XALLOCX], __ATOMIC_ACQUIRE);

	if (s == UNSEEN && resolve(XALLOCX) < 0)
		return resize_slow(XALLOCX, (word)p, size, extra, (word)fl, INNER, RET);
	return resize_slow(XALLOCX, (word)p, size, extra, (word)fl, RESIZE, RET);
}

/* A freeing entry: the filter's bit (the arena's blocks have theirs set), then a tail call. */
#define FREE_WRAPPER(name, i, params, args, b, c)                                                  \
	AP_API AP_FAST void name params                                                            \
	{                                                                                          \
		int s = __atomic_load_n(&ax.state[i], __ATOMIC_ACQUIRE);                           \
                                                                                                   \
		if (__builtin_expect(s == UNSEEN, 0) ||                                            \
		    __builtin_expect(                                                              \
			live__filter_has(__atomic_load_n(&real.filter, __ATOMIC_RELAXED),          \
					 (uintptr_t)p),                                            \
			0))                                                                        \
			return free_slow(i, p, (word)(b), (word)(c));                              \
		return ((void(*) params)ax.fn[i])args;                                             \
	}

FREE_WRAPPER(dallocx, DALLOCX, (void *p, int fl), (p, fl), fl, 0)
FREE_WRAPPER(sdallocx, SDALLOCX, (void *p, size_t n, int fl), (p, n, fl), n, fl)
FREE_WRAPPER(tc_free, TC_FREE, (void *p), (p), 0, 0)
FREE_WRAPPER(tc_cfree, TC_CFREE, (void *p), (p), 0, 0)
FREE_WRAPPER(cfree, CFREE, (void *p), (p), 0, 0)
FREE_WRAPPER(__libc_cfree, LIBC_CFREE, (void *p), (p), 0, 0)
FREE_WRAPPER(tc_delete, TC_DELETE, (void *p), (p), 0, 0)
FREE_WRAPPER(tc_deletearray, TC_DELETEARRAY, (void *p), (p), 0, 0)
FREE_WRAPPER(tc_free_sized, TC_FREE_SIZED, (void *p, size_t n), (p, n), n, 0)
FREE_WRAPPER(tc_delete_sized, TC_DELETE_SIZED, (void *p, size_t n), (p, n), n, 0)
FREE_WRAPPER(tc_deletearray_sized, TC_DELETEARRAY_SIZED, (void *p, size_t n), (p, n), n, 0)
FREE_WRAPPER(tc_delete_nothrow, TC_DELETE_NT, (void *p, const void *t), (p, t), t, 0)
FREE_WRAPPER(tc_deletearray_nothrow, TC_DELETEARRAY_NT, (void *p, const void *t), (p, t), t, 0)
FREE_WRAPPER(tc_delete_aligned, TC_DELETE_AL, (void *p, size_t al), (p, al), al, 0)
FREE_WRAPPER(tc_deletearray_aligned, TC_DELETEARRAY_AL, (void *p, size_t al), (p, al), al, 0)
FREE_WRAPPER(free_sized, FREE_SIZED, (void *p, size_t n), (p, n), n, 0)
FREE_WRAPPER(tc_delete_sized_aligned, TC_DELETE_SIZED_AL, (void *p, size_t n, size_t al),
	     (p, n, al), n, al)
FREE_WRAPPER(tc_deletearray_sized_aligned, TC_DELETEARRAY_SIZED_AL, (void *p, size_t n, size_t al),
	     (p, n, al), n, al)
FREE_WRAPPER(tc_delete_aligned_nothrow, TC_DELETE_AL_NT, (void *p, size_t al, const void *t),
	     (p, al, t), al, t)
FREE_WRAPPER(tc_deletearray_aligned_nothrow, TC_DELETEARRAY_AL_NT,
	     (void *p, size_t al, const void *t), (p, al, t), al, t)
FREE_WRAPPER(free_aligned_sized, FREE_ALIGNED_SIZED, (void *p, size_t al, size_t n), (p, al, n), al,
	     n)
