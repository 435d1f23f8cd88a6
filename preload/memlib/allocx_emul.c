/* SPDX-License-Identifier: MIT */
/*
 * allocx_emul.c - the stand-ins of allocx.c's entry points that no loaded
 * object defines (a program's weak reference to mallocx, free_sized on a
 * glibc without it): each does what its name says with the C allocator's
 * functions (alloc.h's real), which allocx.c's wrappers count as the
 * allocator's own. jemalloc's flags: MALLOCX_LG_ALIGN and MALLOCX_ZERO.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "allocx.h"

#define MALLOCX_LG_ALIGN_MASK 0x3f
#define MALLOCX_ZERO	      0x40

/* mallocx's and rallocx's alignment (0: malloc's). */
static size_t flags_align(int flags)
{
	return flags & MALLOCX_LG_ALIGN_MASK ? (size_t)1 << (flags & MALLOCX_LG_ALIGN_MASK) : 0;
}

static void *emul_mallocx(size_t n, int flags)
{
	size_t al = flags_align(flags);
	void *p = NULL;

	if (al > 16) {
		if (real.posix_memalign(&p, al, n))
			return NULL;
		if (p && (flags & MALLOCX_ZERO))
			memset(p, 0, n);
		return p;
	}
	return flags & MALLOCX_ZERO ? real.calloc(1, n) : real.malloc(n);
}

static void *emul_rallocx(void *p, size_t n, int flags)
{
	size_t al = flags_align(flags), old = real.usable ? real.usable(p) : 0;
	void *q;

	if (al > 16 && !((uintptr_t)p & (al - 1)) && n <= old) {
		q = p;	      /* fits where it is, aligned as asked */
	} else if (al > 16) { /* realloc keeps only 16 bytes of alignment: a new block */
		if (real.posix_memalign(&q, al, n))
			return NULL;
		memcpy(q, p, old < n ? old : n);
		real.free(p);
	} else if (!(q = real.realloc(p, n))) {
		return NULL;
	}
	if ((flags & MALLOCX_ZERO) && n > old)
		memset((char *)q + old, 0, n - old);
	return q;
}

/* In place: only within the block's usable size. */
static size_t emul_xallocx(void *p, size_t size, size_t extra, int flags)
{
	(void)size, (void)extra, (void)flags;
	return real.usable ? real.usable(p) : 0;
}

static void emul_free(void *p)
{
	real.free(p);
}

static void *emul_malloc(size_t n)
{
	return real.malloc(n);
}

static void *emul_calloc(size_t n, size_t size)
{
	return real.calloc(n, size);
}

static void *emul_realloc(void *p, size_t n)
{
	return real.realloc(p, n);
}

static void *emul_memalign(size_t al, size_t n)
{
	return real.memalign(al, n);
}

static int emul_posix_memalign(void **out, size_t al, size_t n)
{
	return real.posix_memalign(out, al, n);
}

static void *emul_valloc(size_t n)
{
	return real.valloc(n);
}

static void *emul_pvalloc(size_t n)
{
	return real.pvalloc(n);
}

/* tc_new's: nothing here can throw std::bad_alloc, so a failure ends the program (as cxx.c). */
static void *emul_new(size_t n)
{
	static const char msg[] = "autoprof: tc_new is defined nowhere and malloc failed: "
				  "aborting\n";
	void *p = real.malloc(n ? n : 1);

	if (!p) {
		if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
			abort();
		abort();
	}
	return p;
}

static void *emul_new_nt(size_t n, const void *nt)
{
	(void)nt;
	return real.malloc(n ? n : 1);
}

static void *emul_new_al(size_t n, size_t al)
{
	void *p = NULL;

	if (real.posix_memalign(&p, al < sizeof(void *) ? sizeof(void *) : al, n ? n : 1))
		return emul_new(SIZE_MAX); /* aborts */
	return p;
}

static void *emul_new_al_nt(size_t n, size_t al, const void *nt)
{
	void *p = NULL;

	(void)nt;
	return real.posix_memalign(&p, al < sizeof(void *) ? sizeof(void *) : al, n ? n : 1) ? NULL
											     : p;
}

/* Entry i's stand-in when no loaded object defines it. */
void *allocx_emul__fn(int i)
{
	switch (i) {
	case MALLOCX:
		return (void *)emul_mallocx;
	case RALLOCX:
		return (void *)emul_rallocx;
	case XALLOCX:
		return (void *)emul_xallocx;
	case TC_MALLOC:
	case TC_MALLOC_SKIP:
		return (void *)emul_malloc;
	case TC_CALLOC:
		return (void *)emul_calloc;
	case TC_REALLOC:
		return (void *)emul_realloc;
	case TC_MEMALIGN:
		return (void *)emul_memalign;
	case TC_POSIX_MEMALIGN:
	case POSIX_MEMALIGN_:
		return (void *)emul_posix_memalign;
	case TC_VALLOC:
		return (void *)emul_valloc;
	case TC_PVALLOC:
		return (void *)emul_pvalloc;
	case TC_NEW:
	case TC_NEWARRAY:
		return (void *)emul_new;
	case TC_NEW_NT:
	case TC_NEWARRAY_NT:
		return (void *)emul_new_nt;
	case TC_NEW_AL:
	case TC_NEWARRAY_AL:
		return (void *)emul_new_al;
	case TC_NEW_AL_NT:
	case TC_NEWARRAY_AL_NT:
		return (void *)emul_new_al_nt;
	default: /* the frees: the block is the C allocator's (free_sized's size, dallocx's flags
		  * unused) */
		return (void *)emul_free;
	}
}
