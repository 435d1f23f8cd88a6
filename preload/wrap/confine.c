/* SPDX-License-Identifier: MIT */
/*
 * confine.c - chroot, interposed: a program that shuts itself in a folder
 * leaves behind the files the library would load later (libunwind, which a
 * batched process loads as it makes its first thread: handler/unwind_lib.c),
 * so they are loaded first. pivot_root, Landlock and the mounts of a new
 * namespace, made before the first thread, are not seen (doc/limits.md):
 * libunwind then says once that it cannot be loaded.
 */
#include <dlfcn.h>
#include <errno.h>
#include <sys/syscall.h>

#include "wrap.h"

typedef int (*chroot_fn)(const char *);

AP_API int chroot(const char *path)
{
	static chroot_fn real;

	if (!real)
		real = (chroot_fn)dlsym(RTLD_NEXT, "chroot");
	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	/* (not in a vfork child, which shares our memory) */
	if (__atomic_load_n(&autoprof.active, __ATOMIC_ACQUIRE) &&
	    (pid_t)raw_syscall(SYS_getpid, 0, 0, 0, 0, 0, 0) == autoprof.pid)
		samplers__need_unwinder();
	return real(path);
}
