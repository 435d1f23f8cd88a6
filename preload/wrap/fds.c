/* SPDX-License-Identifier: MIT */
/*
 * fds.c - keep the program's hands off the profiler's file descriptors, and
 * the profiler's off the program's low ones.
 *
 * close, close_range and closefrom are interposed: a program that closes
 * every fd (daemons, shells, test harnesses) leaves ours open, so profiling
 * goes on and no fd of ours can be reused under us, and one line says so.
 * pipe and pipe2 are interposed so that the pipe libunwind opens for itself
 * lands above AP_FD_FLOOR rather than on fds 3 and 4, which programs and
 * shell scripts expect to be free.
 *
 * dup, dup2, dup3 and fcntl(F_DUPFD, F_DUPFD_CLOEXEC) are interposed so that
 * the program gets exactly the number it would get without us: when that
 * number is one of ours, ours moves to another number first (the holder,
 * writer, counter or libunwind's pipe, is told), and the program's call
 * then replaces the old number atomically. Our own fds look closed to these
 * calls (EBADF), as they would be without us: a shell that saves a number
 * before redirecting it (F_DUPFD) must not save ours. The writer checks, before
 * every write, that its fd is still its file (a raw close is not seen here).
 *
 * In a process that is not the session's (a vfork child shares our memory,
 * not our fds), every wrapper only makes the plain call.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <linux/close_range.h>
#include <stdarg.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "wrap.h"

/* libunwind's own pipe (its static array, as passed to pipe2), to renumber. */
static int *unwind_pipe;

/* A pipe kept high from the start for libunwind's (fds__keep_unwinder_pipe); -1: none. */
static int kept_pipe[2] = {-1, -1};
#define UNWINDER_PIPE_FLAGS (O_CLOEXEC | O_NONBLOCK) /* libunwind's pipe2 asks for these */

/* A new number, at or above min, for our fd, or -errno. */
static int dup_away(int fd, int min)
{
	int nfd = (int)raw_syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, min);

	if (nfd < 0)
		nfd = fdtab__dup_high(fd, true);
	if (nfd < 0)
		nfd = (int)raw_syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, 3);
	return nfd < 0 ? -errno : fdtab__own(nfd);
}

/*
 * The program wants number fd, which is ours: give ours another number (at
 * or above min) and tell its holder; the old number stays open until the
 * program's call replaces it (or closes it, for the caller to reuse).
 * Returns 0 or -errno. Not async-signal-safe.
 */
static int evict(int fd, int min)
{
	int nfd;

	if (fd == __atomic_load_n(&autoprof.writer.fd, __ATOMIC_ACQUIRE))
		return writer__move_fd(&autoprof.writer, min) < 0 ? -EBUSY : 0;
	for (int i = 0; i < autoprof.counters.n; i++) {
		if (autoprof.counters.c[i].fd != fd)
			continue;
		nfd = dup_away(fd, min);
		if (nfd < 0)
			return nfd;
		autoprof.counters.c[i].fd = nfd;
		fdtab__disown(fd);
		return 0;
	}
	for (int h = 0, *held[2] = {unwind_pipe, kept_pipe}; h < 2; h++)
		for (int i = 0; held[h] && i < 2; i++) {
			if (__atomic_load_n(&held[h][i], __ATOMIC_RELAXED) != fd)
				continue;
			nfd = dup_away(fd, min);
			if (nfd < 0)
				return nfd;
			__atomic_store_n(&held[h][i], nfd, __ATOMIC_RELEASE);
			fdtab__disown(fd);
			return 0;
		}
	fdtab__disown(fd); /* a holder we do not know: the program takes the number */
	return 0;
}

/*
 * Before the program's call makes newfd (dup2, dup3): if newfd is ours, move
 * ours away. Says once when ours cannot move (the program still gets its
 * number; ours is then lost).
 */
static void make_room(int oldfd, int newfd)
{
	if (oldfd == newfd || !fdtab__is_own(newfd) || !wrap_in_session())
		return;
	if (evict(newfd, newfd + 1) < 0) {
		static int said;

		if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
			pr_warn(
			    "the program takes file descriptor %d, the profiler's, and there is no "
			    "other free; profiling output may stop (said once)",
			    newfd);
		fdtab__disown(newfd);
	}
}

/* This library's executable segments: calls from there are ours. */
static uintptr_t self_lo[4], self_hi[4];
static int nr_self;

static int note_self(struct dl_phdr_info *info, size_t size, void *base)
{
	(void)size;
	if ((void *)info->dlpi_addr != base)
		return 0;
	for (int i = 0; i < info->dlpi_phnum && nr_self < 4; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			self_lo[nr_self] = info->dlpi_addr + ph->p_vaddr;
			self_hi[nr_self++] = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
		}
	}
	return 1;
}

__attribute__((constructor(101))) static void fds_init(void)
{
	Dl_info self;

	if (dladdr((void *)fds_init, &self) && self.dli_fbase)
		dl_iterate_phdr(note_self, self.dli_fbase);
}

static bool ours_calling(const void *caller)
{
	for (int i = 0; i < nr_self; i++)
		if ((uintptr_t)caller >= self_lo[i] && (uintptr_t)caller < self_hi[i])
			return true;
	return false;
}

/*
 * Is fd ours, and the caller the program? Then it sees the number as not
 * open: EBADF. Our own calls (counters' F_SETFD) pass.
 */
#define hidden(fd) hidden_from(fd, __builtin_return_address(0))
static bool hidden_from(int fd, const void *caller)
{
	if (!fdtab__is_own(fd) || ours_calling(caller) || !wrap_in_session())
		return false;
	errno = EBADF;
	return true;
}

AP_API int dup2(int oldfd, int newfd)
{
	if (hidden(oldfd))
		return -1;
	make_room(oldfd, newfd);
	return (int)raw_syscall(SYS_dup2, oldfd, newfd);
}

AP_API int dup3(int oldfd, int newfd, int flags)
{
	if (hidden(oldfd))
		return -1;
	make_room(oldfd, newfd);
	return (int)raw_syscall(SYS_dup3, oldfd, newfd, flags);
}

/*
 * F_DUPFD and dup: the lowest free number at or above min, as if none of
 * ours were taken: if the kernel's answer passed one of ours, ours moves and
 * the program gets that number.
 */
static int dup_from(int fd, int min, bool cloexec)
{
	int cmd = cloexec ? F_DUPFD_CLOEXEC : F_DUPFD;
	int got = (int)raw_syscall(SYS_fcntl, fd, cmd, min);
	int own;

	if (got < 0 || !wrap_in_session())
		return got;
	own = fdtab__next_own(min < 0 ? 0 : min);
	if (own < 0 || own >= got)
		return got;
	if (evict(own, got + 1) < 0)
		return got;
	if (raw_syscall(SYS_dup3, fd, own, cloexec ? O_CLOEXEC : 0) < 0)
		return got;
	raw_syscall(SYS_close, got);
	return own;
}

AP_API int dup(int fd)
{
	if (hidden(fd))
		return -1;
	return dup_from(fd, 0, false);
}

/*
 * fcntl and fcntl64: our fds look closed (EBADF), F_DUPFD commands give the
 * number the program would get without us; the argument is passed on as is.
 */
static int fcntl_common(int fd, int cmd, unsigned long arg, const void *caller)
{
	if (hidden_from(fd, caller))
		return -1;
	if ((cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) && fdtab__next_own(0) >= 0) {
		int r = dup_from(fd, (int)arg, cmd == F_DUPFD_CLOEXEC);

		return r;
	}
	if (cmd == F_SETLKW || cmd == F_OFD_SETLKW) {
		typedef int (*fcntl_fn)(int, int, ...);
		static fcntl_fn next;

		if (!next)
			next = (fcntl_fn)dlsym(RTLD_NEXT, "fcntl64");
		if (!next)
			next = (fcntl_fn)dlsym(RTLD_NEXT, "fcntl");
		if (next)
			return next(fd, cmd, arg); /* keeps its cancellation point */
	}
	return (int)raw_syscall(SYS_fcntl, fd, cmd, arg);
}

AP_API int fcntl(int fd, int cmd, ...)
{
	va_list ap_list;
	unsigned long arg;

	va_start(ap_list, cmd);
	arg = va_arg(ap_list, unsigned long);
	va_end(ap_list);
	return fcntl_common(fd, cmd, arg, __builtin_return_address(0));
}

/* The same function under its large-file name (one and the same on 64-bit). */
AP_API int fcntl64(int fd, int cmd, ...) __attribute__((alias("fcntl")));

static void say_kept(void)
{
	static int said;

	if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
		pr_info("the program closes file descriptors that are the profiler's; they stay "
			"open, the program is told they are not open, and profiling goes on");
}

AP_API int close(int fd)
{
	if (fdtab__is_own(fd) && wrap_in_session()) {
		say_kept();
		errno = EBADF; /* as for any number the program has not opened */
		return -1;
	}
	return (int)raw_syscall(SYS_close, fd);
}

/* close_range over [first, last] less the profiler's fds. */
AP_API int close_range(unsigned int first, unsigned int last, int flags)
{
	unsigned int from = first;
	int own;

	if (first > last || !wrap_in_session())
		return (int)raw_syscall(SYS_close_range, first, last,
					flags); /* the kernel's answer */
	own = fdtab__next_own((int)(first > INT32_MAX ? INT32_MAX : first));

	while (own >= 0 && (unsigned int)own <= last) {
		if ((unsigned int)own > from &&
		    raw_syscall(SYS_close_range, from, own - 1, flags) < 0)
			return -1;
		if (!(flags & CLOSE_RANGE_CLOEXEC))
			say_kept();
		from = (unsigned int)own + 1;
		if (from == 0)
			return 0;
		own = fdtab__next_own(own + 1);
	}
	if (from > last)
		return 0;
	return (int)raw_syscall(SYS_close_range, from, last, flags);
}

AP_API void closefrom(int lowfd)
{
	close_range(lowfd < 0 ? 0 : (unsigned int)lowfd, ~0U, 0);
}

/*
 * A pipe libunwind makes for itself (its caller is in libunwind) goes high.
 * Where the hard RLIMIT_NOFILE leaves no number above the program's
 * (fdtab__no_room_high), libunwind goes without, and its call fails with EMFILE
 * before any number is taken (libunwind opens it again from a signal handler
 * when it needs it: even a moment's pipe could cost the program its last
 * file); libunwind then takes the memory it would have checked through the
 * pipe as unreadable, and stops a frame-chain walk there.
 */
static bool unwinder_goes_without(void *caller)
{
	if (!unwind__owns_pc((uintptr_t)caller) || !fdtab__no_room_high())
		return false;
	errno = EMFILE;
	return true;
}

/* libunwind's static array (never a stack one): renumbered by evict() from now on. */
static __attribute__((noinline)) void note_unwinder_array(int *fds)
{
	if ((uintptr_t)fds - (uintptr_t)__builtin_frame_address(0) + (1UL << 24) > (1UL << 25))
		unwind_pipe = fds;
}

/* A pipe of ours moved high; both closed (-1 each) where the numbers would
 * still be the program's (fdtab__costs). Returns 0 or -1 (EMFILE). */
static int lift_pipe(int fds[2])
{
	fds[0] = fdtab__move_high(fds[0], true);
	fds[1] = fdtab__move_high(fds[1], true);
	if (fdtab__costs(fds[0]) || fdtab__costs(fds[1])) {
		fdtab__close(fds[0]);
		fdtab__close(fds[1]);
		fds[0] = fds[1] = -1;
		errno = EMFILE;
		return -1;
	}
	return 0;
}

/* After the pipe is made: libunwind's goes high. Returns 0 or -1. */
static int relocate_if_unwinder(int fds[2], void *caller)
{
	if (!unwind__owns_pc((uintptr_t)caller))
		return 0;
	if (lift_pipe(fds)) /* the limit changed meanwhile */
		return -1;
	note_unwinder_array(fds);
	return 0;
}

/*
 * A process that sets libunwind up later than its start (unwind.c: with its
 * first thread) does so after the program may have lowered RLIMIT_NOFILE,
 * when there may be no number above the program's left for libunwind's pipe
 * (hostile.t nofile: two files fewer): a pipe made high now is kept for it.
 * None where even now the numbers would be the program's. Not
 * async-signal-safe.
 */
void fds__keep_unwinder_pipe(void)
{
	int p[2];

	if (kept_pipe[0] >= 0 || raw_syscall(SYS_pipe2, p, UNWINDER_PIPE_FLAGS, 0, 0, 0, 0) < 0 ||
	    lift_pipe(p))
		return;
	kept_pipe[0] = p[0];
	kept_pipe[1] = p[1];
}

/* libunwind's pipe2, asking as it does: the kept pipe, renumbered in its array from then on. */
static bool take_kept_pipe(int fds[2], int flags, void *caller)
{
	if (__atomic_load_n(&kept_pipe[0], __ATOMIC_ACQUIRE) < 0 || flags != UNWINDER_PIPE_FLAGS ||
	    !unwind__owns_pc((uintptr_t)caller))
		return false;
	fds[0] = __atomic_exchange_n(&kept_pipe[0], -1, __ATOMIC_ACQ_REL);
	fds[1] = __atomic_exchange_n(&kept_pipe[1], -1, __ATOMIC_ACQ_REL);
	note_unwinder_array(fds);
	return fds[0] >= 0 && fds[1] >= 0;
}

AP_API int pipe2(int fds[2], int flags)
{
	if (take_kept_pipe(fds, flags, __builtin_return_address(0)))
		return 0;
	if (unwinder_goes_without(__builtin_return_address(0)) ||
	    raw_syscall(SYS_pipe2, fds, flags) < 0)
		return -1;
	return relocate_if_unwinder(fds, __builtin_return_address(0));
}

AP_API int pipe(int fds[2])
{
	if (unwinder_goes_without(__builtin_return_address(0)) ||
	    raw_syscall(SYS_pipe2, fds, 0) < 0)
		return -1;
	return relocate_if_unwinder(fds, __builtin_return_address(0));
}
