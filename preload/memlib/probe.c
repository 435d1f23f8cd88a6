/* SPDX-License-Identifier: MIT */
/*
 * probe.c - does one of alloc.c's wrappers' real functions reach another
 * wrapper? tcmalloc's posix_memalign, valloc and pvalloc call its own
 * tc_memalign through the PLT, which allocx.c's wrapper counts: the outer
 * wrapper must then only pass the call on (alloc.h's probe_begin and
 * probe_end tell what a call reached). Asked once per wrapper, at its
 * first call; the probe's block is freed by the free of the object that
 * made it (jemalloc defines no pvalloc: glibc's gives the block, which
 * jemalloc's free must never see).
 */
#include <dlfcn.h>

#include "../dynsym.h"
#include "alloc.h"

/* The real function wrapper k calls. */
static void *real_of(int k)
{
	switch (k) {
	case P_POSIX_MEMALIGN:
		return (void *)real.posix_memalign;
	case P_ALIGNED_ALLOC:
		return (void *)real.aligned_alloc;
	case P_MEMALIGN:
		return (void *)real.memalign;
	case P_VALLOC:
		return (void *)real.valloc;
	case P_PVALLOC:
		return (void *)real.pvalloc;
	case P_LIBC_MALLOC:
		return (void *)real.libc_malloc;
	case P_LIBC_CALLOC:
		return (void *)real.libc_calloc;
	case P_LIBC_REALLOC:
		return (void *)real.libc_realloc;
	case P_LIBC_MEMALIGN:
		return (void *)real.libc_memalign;
	case P_LIBC_VALLOC:
		return (void *)real.libc_valloc;
	default:
		return (void *)real.libc_pvalloc;
	}
}

/* The free of the object that defines wrapper k's real function, or NULL. */
static void *object_free(int k)
{
	Dl_info info;

	if (!dladdr(real_of(k), &info))
		return NULL;
	return (void *)dynsym__in_object("free", (uintptr_t)info.dli_fbase);
}

uint8_t probe_state[NR_PROBED];

__attribute__((noinline)) bool probe__passes(int k)
{
	void (*ofree)(void *);
	struct probe pr;
	void *p = NULL;
	int st;

	if (!probe_begin(&pr))
		return false;
	switch (k) {
	case P_POSIX_MEMALIGN:
		if (real.posix_memalign(&p, 64, 1))
			p = NULL;
		break;
	case P_ALIGNED_ALLOC:
		p = real.aligned_alloc(64, 64);
		break;
	case P_MEMALIGN:
		p = real.memalign(64, 1);
		break;
	case P_VALLOC:
		p = real.valloc(1);
		break;
	case P_PVALLOC:
		p = real.pvalloc(1);
		break;
	case P_LIBC_MALLOC:
		p = real.libc_malloc(1);
		break;
	case P_LIBC_CALLOC:
		p = real.libc_calloc(1, 1);
		break;
	case P_LIBC_REALLOC:
		p = real.libc_realloc(NULL, 1);
		break;
	case P_LIBC_MEMALIGN:
		p = real.libc_memalign(64, 1);
		break;
	case P_LIBC_VALLOC:
		p = real.libc_valloc(1);
		break;
	default:
		p = real.libc_pvalloc(1);
		break;
	}
	st = probe_end(&pr) ? 2 : 1;
	if (p && (ofree = (void (*)(void *))object_free(k)))
		ofree(p); /* else left: 1 byte */
	__atomic_store_n(&probe_state[k], st, __ATOMIC_RELEASE);
	return st == 2;
}
