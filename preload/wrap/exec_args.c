/* SPDX-License-Identifier: MIT */
/*
 * exec_args.c - may the exec wrappers read what the program passed? The
 * kernel answers a bad pointer with EFAULT (or, for an environment, after
 * the path's lookup: ENOENT), where a wrapper that reads it would fault: an
 * exec whose path or environment this process cannot read is passed on
 * untouched, as without us. Read through process_vm_readv(2) of this
 * process, which fails where a read would fault. A thread in a seccomp
 * filter makes no system call of ours (the exec is passed on as well).
 * Async-signal-safe.
 */
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "wrap.h"

#define CHUNK                                                                                      \
	256 /* bytes read at a time: little stack (an exec from a handler on a small               \
	     * alternate stack) */

/* Copy n bytes at p into out; false where they are not all readable. */
static bool copy_in(const void *p, size_t n, void *out)
{
	struct iovec local = {out, n}, remote = {(void *)p, n};

	return raw_syscall(SYS_process_vm_readv, raw_syscall(SYS_getpid, 0, 0, 0, 0, 0, 0), &local,
			   1, &remote, 1, 0) == (long)n;
}

/* Bytes from p to its chunk's end (never across a page). */
static size_t to_chunk_end(const void *p)
{
	return CHUNK - ((uintptr_t)p & (CHUNK - 1));
}

/* Is the string at s readable to its NUL? */
static bool string_readable(const char *s)
{
	char buf[CHUNK];

	for (;;) {
		size_t n = to_chunk_end(s);

		if (!copy_in(s, n, buf))
			return false;
		if (memchr(buf, 0, n))
			return true;
		s += n;
	}
}

/* Is the NULL-ended array of strings at v (NULL: none) readable, strings included? */
static bool vector_readable(char *const *v)
{
	char *page[CHUNK / sizeof(char *)];

	while (v) {
		size_t n = to_chunk_end(v) / sizeof(char *);

		if (((uintptr_t)v & (sizeof(char *) - 1)) || !copy_in(v, n * sizeof(char *), page))
			return false;
		for (size_t i = 0; i < n; i++) {
			if (!page[i])
				return true;
			if (!string_readable(page[i]))
				return false;
		}
		v += n;
	}
	return true;
}

bool exec_args__readable(const char *path, char *const envp[])
{
	if (ap_sandboxed)
		return false; /* (no system call of ours: passed on) */
	return path && string_readable(path) && vector_readable(envp);
}
