/* SPDX-License-Identifier: MIT */
/*
 * wrap.h - the functions of libc the library interposes, all under this roof,
 * exported with one macro (and listed in preload.map):
 *
 *   threads.c  pthread_create, pthread_setname_np, prctl
 *   process.c  the exec family, posix_spawn, _exit, _Exit, quick_exit, syscall
 *   signals.c  sigaction, signal & co, the masks, sigwait & co, signalfd
 *   fds.c      close, close_range, closefrom, dup*, fcntl, pipe
 *   loader.c   dl_iterate_phdr (for our unwinder), dlclose
 *   fddir.c    opendir & readdir of /proc/self/fd: ours are not listed
 *   waits.c    the blocking calls (sleeps, poll, locks, ...): off-CPU time
 *   exec_note.c the one line when a static program is exec'd (not entered)
 *   exec_args.c whether an exec's path and environment can be read
 *   confine.c  chroot (pivot_root, Landlock: syscall()): what we load later, first
 *
 * Every wrapper is the plain call of the real function when profiling is
 * off, and in a process that is not the session's (a vfork child shares our
 * memory: it must touch nothing of ours).
 */
#ifndef AUTOPROF_WRAP_H
#define AUTOPROF_WRAP_H

#include <sys/syscall.h>

#include "internal.h"

/* An interposed function: visible to the dynamic linker (the rest is hidden). */
#define AP_API __attribute__((visibility("default")))

/* Is the caller in the session's process (profiling on, not a vfork child sharing our
 * memory)? Async-signal-safe. */
static inline bool wrap_in_session(void)
{
	return __atomic_load_n(&autoprof.active, __ATOMIC_ACQUIRE) &&
	       (pid_t)raw_syscall(SYS_getpid, 0, 0, 0, 0, 0, 0) == autoprof.pid;
}

/*
 * exec_args.c: can the exec wrappers read @path (NULL: no) and the
 * environment @envp, strings included? False: pass the exec on untouched
 * (the kernel says EFAULT or ENOENT). Async-signal-safe.
 */
bool exec_args__readable(const char *path, char *const envp[]);

/*
 * exec_args.c: does the lookup of @path (relative to @dirfd), readable, fail
 * (ENOENT, ENOTDIR, ELOOP, ENAMETOOLONG, EACCES), so that an exec of it fails
 * the same way? Asked with an O_PATH open, which walks the path as the exec
 * does, with the same credentials; its errno is left changed. A file made
 * between this and the exec makes it succeed: the image's file is then left
 * as a kill would leave it. Async-signal-safe.
 */
bool exec_args__doomed(int dirfd, const char *path);

/* exec_note.c: one line when a profiled process runs a static program (-1: pid, fd unknown). */
void exec_note__static(const char *file, int fd, bool search, pid_t pid);

/*
 * confine.c: before the program shuts itself off from the file system
 * (chroot, pivot_root, Landlock), what the library would load later is
 * loaded now. Not async-signal-safe.
 */
void confine__before(void);

#endif /* AUTOPROF_WRAP_H */
