/* SPDX-License-Identifier: MIT */
/*
 * pages.h - memory of the library's own, straight from the kernel (anonymous
 * mappings), for what the library lays out on the paths a program may take
 * from its own signal handler: a forked child's session (pthread_atfork), the
 * file finished before exec and at _exit. POSIX lets a handler call fork,
 * execve and _exit even when it interrupted malloc; libc's heap may then be
 * half-updated (or its lock held), and a malloc of ours there corrupts it
 * (seen: "corrupted double-linked list" aborts in forked children). These
 * calls take no lock and read no state of libc's: async-signal-safe.
 *
 * Each block is its own mapping (whole pages, zeroed by the kernel), with its
 * length in a 16-byte head; a block grows in place or moves (mremap).
 */
#ifndef AUTOPROF_HANDLER_PAGES_H
#define AUTOPROF_HANDLER_PAGES_H

#include <stddef.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "common.h"

#define PAGES_HEAD 16	  /* keeps the block 16-byte aligned, as malloc's */
#define PAGES_SIZE 4096UL /* the unit of rounding: the kernel rounds up to its own */

/* The mapping's length for a block of n bytes (0 when n is too large). */
static inline size_t pages_len(size_t n)
{
	if (n > ((size_t)-1 >> 1))
		return 0;
	return (n + PAGES_HEAD + PAGES_SIZE - 1) & ~(PAGES_SIZE - 1);
}

/* A block of n zeroed bytes, or NULL (out of memory). Async-signal-safe. */
static inline void *pages_alloc(size_t n)
{
	size_t len = pages_len(n);
	long p;

	if (!len)
		return NULL;
	p = raw_syscall(SYS_mmap, 0L, (long)len, (long)(PROT_READ | PROT_WRITE),
			(long)(MAP_PRIVATE | MAP_ANONYMOUS), -1L, 0L);
	if (p == -1)
		return NULL;
	*(size_t *)p = len;
	return (char *)p + PAGES_HEAD;
}

/* The usable bytes of block p (from pages_alloc/pages_realloc). */
static inline size_t pages_size(const void *p)
{
	return *(const size_t *)((const char *)p - PAGES_HEAD) - PAGES_HEAD;
}

/*
 * Block p (NULL: none yet) with room for n bytes, its contents kept (the new
 * bytes zeroed); NULL when out of memory, p then unchanged. Async-signal-safe.
 */
static inline void *pages_realloc(void *p, size_t n)
{
	size_t old, len = pages_len(n);
	long q;

	if (!p)
		return pages_alloc(n);
	if (!len)
		return NULL;
	old = *(size_t *)((char *)p - PAGES_HEAD);
	if (len <= old)
		return p;
	q = raw_syscall(SYS_mremap, (long)((char *)p - PAGES_HEAD), (long)old, (long)len,
			(long)MREMAP_MAYMOVE, 0L, 0L);
	if (q == -1)
		return NULL;
	*(size_t *)q = len;
	return (char *)q + PAGES_HEAD;
}

/* Give block p (NULL: nothing) back to the kernel. Async-signal-safe. */
static inline void pages_free(const void *p)
{
	if (p) {
		char *base = (char *)p - PAGES_HEAD;

		raw_syscall(SYS_munmap, (long)base, (long)*(size_t *)base, 0L, 0L, 0L, 0L);
	}
}

#endif /* AUTOPROF_HANDLER_PAGES_H */
