/* SPDX-License-Identifier: MIT */
/*
 * pages.c - memory of the library's own for the paths a program's signal
 * handler may take (pages.h): anonymous mappings by raw system calls, and a
 * pool of small blocks carved with one atomic add. Each block has a 16-byte
 * head holding its capacity (with the low bit set for a pool block).
 */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "common.h"
#include "pages.h"

#define HEAD	  16UL		/* keeps blocks 16-byte aligned, as malloc's */
#define PAGE	  4096UL	/* the unit of rounding: the kernel rounds up to its own */
#define POOL_SIZE (64 * 1024UL) /* small blocks of a process, all told */
#define SMALL	  1024UL	/* the largest block carved from the pool */
#define IN_POOL	  1UL

static char *pool;	 /* mapped at the first small block */
static size_t pool_used; /* bytes carved (may pass POOL_SIZE: then full) */

/* A new mapping of len bytes (a multiple of PAGE), or NULL. */
static void *map(size_t len)
{
	long p = raw_syscall(SYS_mmap, 0L, (long)len, (long)(PROT_READ | PROT_WRITE),
			     (long)(MAP_PRIVATE | MAP_ANONYMOUS), -1L, 0L);

	return p == -1 ? NULL : (void *)p;
}

/* The pool, mapped once (two callers at once: one mapping wins, the other is unmapped). */
static char *pool_get(void)
{
	char *p = __atomic_load_n(&pool, __ATOMIC_ACQUIRE), *fresh, *none = NULL;

	if (p)
		return p;
	fresh = map(POOL_SIZE);
	if (!fresh)
		return NULL;
	if (__atomic_compare_exchange_n(&pool, &none, fresh, false, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE))
		return fresh;
	raw_syscall(SYS_munmap, (long)fresh, (long)POOL_SIZE, 0L, 0L, 0L, 0L);
	return none;
}

/* A pool block of cap bytes with its head (cap + HEAD a multiple of 16), or NULL when full. */
static void *carve(size_t cap)
{
	char *p = pool_get();
	size_t at;

	if (!p)
		return NULL;
	at = __atomic_fetch_add(&pool_used, cap + HEAD, __ATOMIC_RELAXED);
	if (at + cap + HEAD > POOL_SIZE)
		return NULL;
	*(size_t *)(p + at) = cap | IN_POOL;
	return p + at + HEAD;
}

void *pages__alloc(size_t n)
{
	size_t len;
	char *p;

	if (n <= SMALL - HEAD) {
		size_t cap = ((n + HEAD + 15) & ~15UL) - HEAD;

		if ((p = carve(cap < 48 ? 48 : cap)))
			return p;
	}
	if (n > ((size_t)-1 >> 1))
		return NULL;
	len = (n + HEAD + PAGE - 1) & ~(PAGE - 1);
	p = map(len);
	if (!p)
		return NULL;
	*(size_t *)p = len - HEAD;
	return p + HEAD;
}

size_t pages__size(const void *p)
{
	return *(const size_t *)((const char *)p - HEAD) & ~IN_POOL;
}

void *pages__realloc(void *p, size_t n)
{
	size_t head, cap;
	char *q;
	long moved;

	if (!p)
		return pages__alloc(n);
	head = *(size_t *)((char *)p - HEAD);
	cap = head & ~IN_POOL;
	if (n <= cap)
		return p;
	if (head & IN_POOL) { /* out of the pool: copied, the old block left there */
		q = pages__alloc(n);
		if (q)
			memcpy(q, p, cap);
		return q;
	}
	if (n > ((size_t)-1 >> 1))
		return NULL;
	n = (n + HEAD + PAGE - 1) & ~(PAGE - 1);
	moved = raw_syscall(SYS_mremap, (long)((char *)p - HEAD), (long)(cap + HEAD), (long)n,
			    (long)MREMAP_MAYMOVE, 0L, 0L);
	if (moved == -1)
		return NULL;
	*(size_t *)moved = n - HEAD;
	return (char *)moved + HEAD;
}

void pages__free(const void *p)
{
	size_t head;

	if (!p)
		return;
	head = *(const size_t *)((const char *)p - HEAD);
	if (!(head & IN_POOL))
		raw_syscall(SYS_munmap, (long)((const char *)p - HEAD), (long)(head + HEAD), 0L, 0L,
			    0L, 0L);
}
