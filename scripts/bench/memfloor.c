/*
 * memfloor.c - the floor of allocation profiling by interposition, for
 * scripts/bench/memory.py.
 *
 * An LD_PRELOAD library whose malloc, free, calloc and realloc do nothing but
 * call the next definition in the lookup order (libc's), found with dlsym
 * RTLD_NEXT: the least any LD_PRELOAD allocation profiler pays (heaptrack,
 * heapprofd, async-profiler's nativemem, autoprof --memory), before it counts
 * a byte. What is left over the plain run is the call through the program's
 * PLT into this library and the indirect jump to libc's function: on a
 * program that does little but allocate, that alone is a visible share.
 *
 * dlsym may allocate (glibc 2.36 does only when a lookup fails, for its
 * message): calls made while this library looks the functions up get blocks
 * of a small static arena, which free and realloc recognise. The other
 * allocator functions (posix_memalign, aligned_alloc, memalign, ...) are not
 * interposed: their blocks are libc's, which libc's free takes.
 */
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

static void *(*real_malloc)(size_t);
static void (*real_free)(void *);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);

static char arena[16384] __attribute__((aligned(16)));
static size_t arena_used;

static int in_arena(const void *p)
{
	return (uintptr_t)p - (uintptr_t)arena < sizeof(arena);
}

/* A zeroed block of the arena (only while dlsym runs, one thread). */
static void *arena_alloc(size_t n)
{
	size_t need = (n + 15) & ~(size_t)15;
	void *p;

	if (need > sizeof(arena) - arena_used)
		return NULL;
	p = arena + arena_used;
	arena_used += need;
	return p;
}

static void resolve(void)
{
	static int busy;

	if (busy)
		return;
	busy = 1;
	real_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
	real_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
	real_calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
	real_realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
	busy = 0;
}

__attribute__((constructor)) static void memfloor_init(void)
{
	if (!real_realloc)
		resolve();
}

void *malloc(size_t n)
{
	if (__builtin_expect(!real_malloc, 0)) {
		resolve();
		if (!real_malloc)
			return arena_alloc(n);
	}
	return real_malloc(n);
}

void free(void *p)
{
	if (__builtin_expect(in_arena(p), 0))
		return;
	if (__builtin_expect(!real_free, 0))
		resolve();
	real_free(p);
}

void *calloc(size_t n, size_t size)
{
	if (__builtin_expect(!real_calloc, 0)) {
		resolve();
		if (!real_calloc)
			return size && n > SIZE_MAX / size ? NULL : arena_alloc(n * size);
	}
	return real_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
	if (__builtin_expect(in_arena(p), 0)) {
		size_t left = (size_t)(arena + sizeof(arena) - (char *)p);
		void *q = malloc(n);

		if (q) /* the block's size is not kept: copy what of n the arena holds past p */
			memcpy(q, p, n < left ? n : left);
		return q;
	}
	if (__builtin_expect(!real_realloc, 0))
		resolve();
	return real_realloc(p, n);
}
