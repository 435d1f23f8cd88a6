/* SPDX-License-Identifier: MIT */
/*
 * exec_args.c - may the exec wrappers read what the program passed? The
 * kernel answers a bad pointer with EFAULT (or, for an environment, after
 * the path's lookup: ENOENT), where a wrapper that reads it would fault: an
 * exec whose path or environment this process cannot read is passed on
 * untouched, as without us. Read through process_vm_readv(2) of this
 * process, which fails where a read would fault. A thread in a seccomp
 * filter makes no system call of ours (the exec is passed on as well).
 * Also: will the exec fail at its path's lookup (exec_args__doomed)?
 * Async-signal-safe.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "wrap.h"

#define CHUNK 128 /* bytes of a string read at a time (never across a page) */
#define BATCH                                                                                      \
	8 /* strings read by one system call: 1 KiB of stack (an exec from a                       \
	   * handler on a small alternate stack) */

/*
 * Copy the remote pieces into the local ones, n of each, from process pid (this one, asked once
 * a check: a vfork child's pid reads the memory it shares); false where not all are readable.
 */
static bool copy_in(long pid, struct iovec *local, struct iovec *remote, size_t n)
{
	size_t want = 0;

	for (size_t i = 0; i < n; i++)
		want += remote[i].iov_len;
	return raw_syscall(SYS_process_vm_readv, pid, local, n, remote, n, 0) == (long)want;
}

/* Bytes from p to its chunk's end. */
static size_t to_chunk_end(const void *p)
{
	return CHUNK - ((uintptr_t)p & (CHUNK - 1));
}

/* Are the n (at most BATCH) strings at s readable to their NULs? Read side by side. */
static bool strings_readable(long pid, const char *const *s, size_t n)
{
	char buf[BATCH][CHUNK];
	const char *at[BATCH];
	struct iovec local[BATCH], remote[BATCH];
	size_t left = n;

	memcpy(at, s, n * sizeof(*s));
	while (left) {
		size_t k = 0;

		for (size_t i = 0; i < n; i++)
			if (at[i]) {
				remote[k] = (struct iovec){(void *)at[i], to_chunk_end(at[i])};
				local[k] = (struct iovec){buf[k], remote[k].iov_len};
				k++;
			}
		if (!copy_in(pid, local, remote, k))
			return false;
		k = 0;
		for (size_t i = 0; i < n; i++)
			if (at[i]) {
				size_t len = local[k].iov_len;

				at[i] = memchr(buf[k++], 0, len) ? (left--, NULL) : at[i] + len;
			}
	}
	return true;
}

/* Is the NULL-ended array of strings at v (NULL: none) readable, strings included? */
static bool vector_readable(long pid, char *const *v)
{
	char *part[BATCH];

	while (v) {
		size_t n = to_chunk_end(v) / sizeof(char *), got = 0;
		struct iovec local = {part, 0}, remote = {(void *)v, 0};

		if (n > BATCH)
			n = BATCH;
		local.iov_len = remote.iov_len = n * sizeof(char *);
		if (((uintptr_t)v & (sizeof(char *) - 1)) || !copy_in(pid, &local, &remote, 1))
			return false;
		while (got < n && part[got])
			got++;
		if (!strings_readable(pid, (const char *const *)part, got))
			return false;
		if (got < n)
			return true; /* its NULL */
		v += n;
	}
	return true;
}

bool exec_args__readable(const char *path, char *const envp[])
{
	long pid;

	if (ap_sandboxed)
		return false; /* (no system call of ours: passed on) */
	pid = raw_syscall(SYS_getpid, 0, 0, 0, 0, 0, 0);
	return path && strings_readable(pid, &path, 1) && vector_readable(pid, envp);
}

bool exec_args__doomed(int dirfd, const char *path)
{
	long fd = raw_syscall(SYS_openat, dirfd, path, O_PATH | O_CLOEXEC, 0, 0, 0);

	if (fd >= 0) {
		raw_syscall(SYS_close, fd, 0, 0, 0, 0, 0);
		return false;
	}
	/* what the exec's own walk of the path answers as well; not EMFILE, ENOMEM and the
	 * like, which an open meets and an exec does not */
	return errno == ENOENT || errno == ENOTDIR || errno == ELOOP || errno == ENAMETOOLONG ||
	       errno == EACCES;
}
