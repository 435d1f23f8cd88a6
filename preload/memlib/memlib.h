/* SPDX-License-Identifier: MIT */
/*
 * memlib.h - libautoprof-memory.so: the allocator's functions interposed for
 * memory profiles, in a library of its own so that a run without them
 * (CPU profiling only) leaves malloc and free bound to the allocator's.
 *
 *   alloc.c  malloc, calloc, realloc, free & co: the fast paths, the
 *            bootstrap arena, the real functions found with dlsym (alloc.h:
 *            what the fast paths read, shared with cxx.c)
 *   cxx.c    C++'s operator new and delete, every form: counted there when
 *            the allocator defines them (jemalloc, tcmalloc), else passed on
 *   allocx.c the allocators' own entry points (jemalloc's mallocx & co,
 *            tcmalloc's tc_malloc & co, C23's free_sized): counted when an
 *            allocator defines them, else done with the C allocator's
 *   link.c   the constructor, the link to libautoprof.so (memory_link.h),
 *            the check that the program's calls reach the wrappers
 *
 * Built with the preload library's flags, linked with nothing of it: alone
 * in LD_PRELOAD it passes every call through (and says libautoprof.so is
 * missing).
 */
#ifndef AUTOPROF_MEMLIB_H
#define AUTOPROF_MEMLIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../memory_link.h"

/* Exported (the version script memlib.map lists them); the rest is hidden. */
#define AP_API __attribute__((visibility("default")))

/* A size no allocator grants, asked by alloc__interposed() to see whether a call reaches us. */
#define ALLOC_PROBE_SIZE (SIZE_MAX - 4095)

/* Find the real functions (once; the constructor calls it first). Not async-signal-safe. */
void alloc__resolve(void);
/* Find the next operator new and delete of every form (once; the constructor calls it).
 * Not async-signal-safe. */
void cxx__resolve(void);
/* Keep libautoprof.so's slow paths (static): the link is made. */
void alloc__link(const struct ap_memory_core *core);
/* Sample with mean interval and the live filter (on), or stop. Async-signal-safe when !on. */
void alloc__sampling(bool on, uint64_t interval, const uint64_t *filter);
/* The count while not sampling (alloc.c): parked at INT64_MAX less the bytes counted since,
 * at a thread's first allocation; <= 0 before (less the bytes counted). */
extern __thread struct ap_mem_thread idle_count;
/* Did malloc see the probe (ALLOC_PROBE_SIZE) since the last call? Clears it. */
bool alloc__probe_seen(void);

#endif /* AUTOPROF_MEMLIB_H */
