/* SPDX-License-Identifier: MIT */
/*
 * confine.c - chroot, interposed, and the same calls through syscall()
 * (chroot, pivot_root, landlock_restrict_self: wrap/process.c): a program
 * that shuts itself in leaves behind the files the library would load later
 * (libunwind, which a batched process loads as it makes its first thread:
 * handler/unwind_lib.c), so they are loaded first. The mounts of a new
 * namespace are not seen (doc/limits.md): libunwind then says once that it
 * cannot be loaded.
 */
#include <dlfcn.h>
#include <errno.h>
#include <sys/syscall.h>

#include "wrap.h"

typedef int (*chroot_fn)(const char *);

void confine__before(void)
{
	/* not in seccomp (the load's calls may be refused there: no sampler
	 * runs in it anyway) */
	if (wrap_in_session() && !process_events__sandboxed())
		samplers__need_unwinder();
}

AP_API int chroot(const char *path)
{
	static chroot_fn real;

	if (!real)
		real = (chroot_fn)dlsym(RTLD_NEXT, "chroot");
	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	confine__before();
	return real(path);
}
