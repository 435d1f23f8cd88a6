/* SPDX-License-Identifier: MIT */
/*
 * pages.h - memory of the library's own, straight from the kernel (anonymous
 * mappings), for what the library lays out on the paths a program may take
 * from its own signal handler: a forked child's session (pthread_atfork), the
 * file finished before exec and at _exit, a failed exec's reopening. POSIX
 * lets a handler call fork, execve and _exit even when it interrupted malloc;
 * libc's heap may then be half-updated (or its lock held), and a malloc of
 * ours there corrupts it (seen: "corrupted double-linked list" aborts in
 * forked children). These functions take no lock and read no state of
 * libc's: async-signal-safe.
 */
#ifndef AUTOPROF_HANDLER_PAGES_H
#define AUTOPROF_HANDLER_PAGES_H

#include <stddef.h>

/*
 * A block of n zeroed bytes, 16-byte aligned, or NULL (out of memory). Small
 * blocks are carved from one shared pool (one mapping for the dozen small
 * feature bodies a process keeps); others are mappings of their own.
 * Async-signal-safe.
 */
void *pages__alloc(size_t n);

/* The usable bytes of block p (at least what was asked). */
size_t pages__size(const void *p);

/*
 * Block p (NULL: none yet) with room for n bytes, its contents kept (the
 * bytes past them are not said to be zero); NULL when out of memory, p then
 * unchanged. A block of its own mapping grows in place or moves (mremap).
 * Async-signal-safe.
 */
void *pages__realloc(void *p, size_t n);

/* Give block p (NULL: nothing) back: a mapping is unmapped; a small block
 * stays in the pool (bounded: the pool is not refilled). Async-signal-safe. */
void pages__free(const void *p);

#endif /* AUTOPROF_HANDLER_PAGES_H */
