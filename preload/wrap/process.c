/* SPDX-License-Identifier: MIT */
/*
 * process.c - the exec family (execveat too), posix_spawn, _exit, quick_exit,
 * and the execs and exits made through syscall(), interposed.
 *
 * No destructor runs at exec or _exit, so the image's file is finished just
 * before them; if an exec fails, profiling goes on. Each exec hands the next
 * image an environment that keeps the library (child_env.c), also when the program
 * passes an environment of its own. In a vfork child (another pid sharing our
 * memory) nothing of the parent's session is touched, and everything is built
 * on the stack.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <linux/seccomp.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "wrap.h"

#define AP_API	      __attribute__((visibility("default")))
#define EXTRA_ENTRIES 64

extern char **environ;

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);
typedef int (*execveat_fn)(int, const char *, char *const[], char *const[], int);
typedef int (*spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
			const posix_spawnattr_t *, char *const[], char *const[]);
typedef void (*exit_fn)(int);

static void *next(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

/*
 * Run the real exec `call` (execve, execvpe or fexecve through fn) with the
 * environment for the next image, finishing this image's file first (both
 * session calls do nothing in a process that does not own a file). Not when
 * `lookup_fails` (see doomed()): the file and samplers stay as they are, and
 * the environment hands on no counters.
 */
#define EXEC_WITH_ENV(envp, lookup_fails, CALL)                                                    \
	({                                                                                         \
		size_t store_len_ = child_env__count(envp) + EXTRA_ENTRIES;                        \
		char *store_[store_len_];                                                          \
		char strings_[child_env__strings_len(envp)];                                       \
		char **env_;                                                                       \
		int ret_, saved_;                                                                  \
		sigset_t mask_;                                                                    \
		bool doomed_ = (lookup_fails);                                                     \
                                                                                                   \
		if (!doomed_)                                                                      \
			lifecycle__before_exec();                                                  \
		env_ = child_env__for_exec(envp, store_, store_len_, strings_, sizeof(strings_),   \
					   !doomed_);                                              \
		signal_masks__before_exec(&mask_);                                                 \
		ret_ = CALL;                                                                       \
		saved_ = errno;                                                                    \
		signal_masks__exec_failed(&mask_);                                                 \
		if (!doomed_)                                                                      \
			lifecycle__exec_failed();                                                  \
		errno = saved_;                                                                    \
		ret_;                                                                              \
	})

/*
 * Is an exec of path (relative to dirfd) sure to fail, where it would cost
 * this image's file a finish and a reopening (0.8 ms in a VM where the failed
 * exec itself costs 1.5 us)? A forked child that looks for a command along
 * PATH itself (os.execvp: an execve in each directory) fails in all but one.
 * Asked only where the exec would finish the file.
 */
static bool doomed(int dirfd, const char *path)
{
	return lifecycle__exec_finishes() && exec_args__doomed(dirfd, path);
}

AP_API int execve(const char *path, char *const argv[], char *const envp[])
{
	static execve_fn real;

	if (!real)
		real = (execve_fn)next("execve");
	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	if (!exec_args__readable(path, envp))
		return real(path, argv, envp); /* (EFAULT, ENOENT: as without us) */
	exec_note__static(path, -1, false, -1);
	return EXEC_WITH_ENV(envp, doomed(AT_FDCWD, path), real(path, argv, env_));
}

AP_API int execvpe(const char *file, char *const argv[], char *const envp[])
{
	static execve_fn real;

	if (!real)
		real = (execve_fn)next("execvpe");
	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	if (!exec_args__readable(file, envp))
		return real(file, argv, envp); /* (EFAULT, ENOENT: as without us) */
	exec_note__static(file, -1, true, -1);
	/* (a name without a slash: libc searches PATH, and fails only if every directory does) */
	return EXEC_WITH_ENV(envp, strchr(file, '/') && doomed(AT_FDCWD, file),
			     real(file, argv, env_));
}

AP_API int fexecve(int fd, char *const argv[], char *const envp[])
{
	static fexecve_fn real;

	if (!real)
		real = (fexecve_fn)next("fexecve");
	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	if (!exec_args__readable("", envp))
		return real(fd, argv, envp); /* (EFAULT: as without us) */
	exec_note__static(NULL, fd, false, -1);
	return EXEC_WITH_ENV(envp, false, real(fd, argv, env_));
}

/* execveat (glibc 2.34): not through execve, so it needs a wrapper of its own (without one the
 * next image took the name of this one, whose file it moved aside unfinished). */
AP_API int execveat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags)
{
	static execveat_fn real;
	bool lost;

	if (!real)
		real = (execveat_fn)next("execveat");
	if (!exec_args__readable(path, envp)) /* (EFAULT, ENOENT: as without us) */
		return real ? real(dirfd, path, argv, envp, flags)
			    : (int)raw_syscall(SYS_execveat, dirfd, path, argv, envp, flags, 0);
	if ((flags & AT_EMPTY_PATH) && !*path)
		exec_note__static(NULL, dirfd, false, -1);
	else if (*path == '/' || dirfd == AT_FDCWD)
		exec_note__static(path, -1, false, -1);
	/* (AT_SYMLINK_NOFOLLOW: the O_PATH open follows; one that fails fails the exec too) */
	lost = *path && doomed(dirfd, path);
	if (!real) /* an older libc: the system call itself */
		return EXEC_WITH_ENV(
		    envp, lost, (int)raw_syscall(SYS_execveat, dirfd, path, argv, env_, flags));
	return EXEC_WITH_ENV(envp, lost, real(dirfd, path, argv, env_, flags));
}

AP_API int execv(const char *path, char *const argv[])
{
	return execve(path, argv, environ);
}

AP_API int execvp(const char *file, char *const argv[])
{
	return execvpe(file, argv, environ);
}

/* Collect the variadic arguments of execl* and their NULL into argv (on the stack). */
#define VA_ARGV(first, ap_list, argv)                                                              \
	do {                                                                                       \
		size_t n_ = 1;                                                                     \
		va_list count_;                                                                    \
                                                                                                   \
		va_copy(count_, ap_list);                                                          \
		while (va_arg(count_, char *))                                                     \
			n_++;                                                                      \
		va_end(count_);                                                                    \
		argv = alloca((n_ + 1) * sizeof(char *));                                          \
		argv[0] = (char *)(first);                                                         \
		for (size_t i_ = 1; i_ <= n_; i_++)                                                \
			argv[i_] = va_arg(ap_list, char *);                                        \
	} while (0)

AP_API int execl(const char *path, const char *arg, ...)
{
	va_list ap_list;
	char **argv;

	va_start(ap_list, arg);
	VA_ARGV(arg, ap_list, argv);
	va_end(ap_list);
	return execve(path, argv, environ);
}

AP_API int execlp(const char *file, const char *arg, ...)
{
	va_list ap_list;
	char **argv;

	va_start(ap_list, arg);
	VA_ARGV(arg, ap_list, argv);
	va_end(ap_list);
	return execvpe(file, argv, environ);
}

AP_API int execle(const char *path, const char *arg, ...)
{
	va_list ap_list;
	char **argv, **envp = NULL;

	va_start(ap_list, arg);
	VA_ARGV(arg, ap_list, argv);
	envp = va_arg(ap_list, char **); /* after the NULL that ends the arguments */
	va_end(ap_list);
	return execve(path, argv, envp);
}

/* posix_spawn and posix_spawnp: the child gets the environment that keeps the library. */
static int spawn(const char *name, pid_t *pid, const char *path,
		 const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *attr,
		 char *const argv[], char *const envp[])
{
	spawn_fn real = (spawn_fn)next(name);
	size_t store_len = child_env__count(envp) + EXTRA_ENTRIES;
	char *store[store_len];
	char strings[child_env__strings_len(envp)];
	char **env;
	pid_t child = -1;
	int err;

	if (!real)
		return ENOSYS;
	env = child_env__for_exec(envp, store, store_len, strings, sizeof(strings), false);
	err = real(pid ? pid : &child, path, fa, attr, argv, env);
	if (!err)
		exec_note__static(path, -1, !strcmp(name, "posix_spawnp"), pid ? *pid : child);
	return err;
}

AP_API int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
		       const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	return spawn("posix_spawn", pid, path, fa, attr, argv, envp);
}

AP_API int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
			const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	return spawn("posix_spawnp", pid, file, fa, attr, argv, envp);
}

/* _exit and _Exit skip the destructors: finish the file first. */
static __attribute__((noreturn)) void exit_now(const char *name, int status)
{
	exit_fn real;

	lifecycle__stop(); /* nothing unless this process owns a file */
	real = (exit_fn)next(name);
	if (real)
		real(status);
	for (;;)
		syscall(SYS_exit_group, status);
}

AP_API void _exit(int status)
{
	exit_now("_exit", status);
}

AP_API void _Exit(int status)
{
	exit_now("_Exit", status);
}

/* quick_exit runs the at_quick_exit handlers, then exits without our wrapper. */
static void on_quick_exit(void)
{
	lifecycle__stop();
}

typedef long (*syscall_fn)(long, ...);
static syscall_fn real_syscall;

/*
 * Before anything else of ours runs: the real syscall() (the program's
 * calls go through the wrapper below, also from its signal handlers; ours
 * use raw_syscall and never come here), and our quick_exit handler,
 * registered first so that it runs last, after the program's.
 */
__attribute__((constructor(101))) static void exits_init(void)
{
	real_syscall = (syscall_fn)dlsym(RTLD_NEXT, "syscall");
	at_quick_exit(on_quick_exit);
}

/*
 * Does system call nr (with futex op op) wait on a futex? The locks,
 * conditions and parking of runtimes that call it through syscall() (Rust's
 * std among them): their waits are off-CPU time at libc's syscall, under the
 * caller (session/offcpu.c). Async-signal-safe.
 */
static bool futex_waits(long nr, long op)
{
	long cmd = op & ~(long)(FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME);

	if (nr == SYS_futex)
		return cmd == FUTEX_WAIT || cmd == FUTEX_WAIT_BITSET || cmd == FUTEX_LOCK_PI ||
		       cmd == FUTEX_LOCK_PI2 || cmd == FUTEX_WAIT_REQUEUE_PI;
#ifdef SYS_futex_waitv
	return nr == SYS_futex_waitv;
#else
	return false;
#endif
}

/* Does system call nr shut the program off from the file system (confine.c)? */
static bool confines(long nr)
{
#ifdef SYS_landlock_restrict_self
	if (nr == SYS_landlock_restrict_self)
		return true;
#endif
	return nr == SYS_chroot || nr == SYS_pivot_root;
}

/*
 * syscall(): the exits, seccomp, chroot, pivot_root and Landlock the program
 * makes through it are seen (glibc has no seccomp() function: libseccomp and
 * others call it this way),
 * and so are its futex waits (off-CPU time, futex_waits); everything else is
 * passed on untouched. The library's own system calls do
 * not come here (raw_syscall). A thread in seccomp strict mode makes no other
 * system call here. Async-signal-safe (after exits_init, which runs before
 * any handler is installed), but for the calls that confine the program.
 */
AP_API long syscall(long nr, ...)
{
	va_list ap_list;
	long a[6];

	va_start(ap_list, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap_list, long);
	va_end(ap_list);
	if (nr == SYS_execve) /* the wrappers' work first, the call itself through libc */
		return execve((const char *)a[0], (char *const *)a[1], (char *const *)a[2]);
	if (nr == SYS_execveat && a[1]) /* (a NULL path: passed on as it is) */
		return execveat((int)a[0], (const char *)a[1], (char *const *)a[2],
				(char *const *)a[3], (int)a[4]);
	if (nr == SYS_exit_group)
		lifecycle__stop(); /* nothing unless this process owns a file */
	else if (nr == SYS_exit)
		samplers__stop_self();
	else if (confines(nr))
		confine__before(); /* (not async-signal-safe: a chroot from a handler is not) */
	else if (nr == SYS_seccomp &&
		 (a[0] == SECCOMP_SET_MODE_STRICT || a[0] == SECCOMP_SET_MODE_FILTER))
		process_events__before_seccomp(a[0] == SECCOMP_SET_MODE_FILTER &&
					       (a[1] & SECCOMP_FILTER_FLAG_TSYNC));
	if (!real_syscall)
		real_syscall = (syscall_fn)dlsym(RTLD_NEXT, "syscall");
	if (!real_syscall) {
		errno = ENOSYS;
		return -1;
	}
	if (futex_waits(nr, a[1])) { /* AUTOPROF_OFFCPU: a lock or condition of its own */
		uint64_t since = offcpu__begin();
		long ret = real_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);

		if (since)
			offcpu__end(since, (const void *)real_syscall);
		return ret;
	}
	return real_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}
