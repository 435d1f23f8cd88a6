/* SPDX-License-Identifier: MIT */
/*
 * raw_syscall.c - raw_syscall(): a system call made by the instruction itself.
 *
 * Inside the library, a call to syscall() binds to our own exported wrapper
 * (wrap/process.c), which must first find libc's with dlsym: a signal
 * handler could only use it once that was done. raw_syscall() depends on
 * nothing: no symbol lookup, no lock, no cancellation point, so the handler
 * layer and everything it reaches use it. Same convention as syscall(): -1
 * with errno set on failure. raw_syscall__read_file() reads a small file whole with
 * them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common.h"

/* The system call nr with six arguments; -errno on failure. Async-signal-safe. */
static long raw6(long nr, long a, long b, long c, long d, long e, long f)
{
#if defined(__x86_64__)
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	register long x3 __asm__("x3") = d;
	register long x4 __asm__("x4") = e;
	register long x5 __asm__("x5") = f;

	__asm__ volatile("svc 0"
			 : "+r"(x0)
			 : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
			 : "memory");
	return x0;
#else
#error "raw_syscall: add this architecture's system call instruction"
#endif
}

/*
 * syscall(nr, ...) without libc: returns the kernel's result, or -1 with
 * errno set. Async-signal-safe.
 */
long raw_syscall(long nr, ...)
{
	va_list ap;
	long a[6], r;

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	r = raw6(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	if ((unsigned long)r > -4096UL) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

/*
 * Read a small file (from /proc) whole into buf, NUL-terminated; returns its
 * length, or -errno (buf is then ""). Raw system calls, so that no
 * cancellation point of the program's thread lies inside our code and a
 * signal does not cut the read short. Async-signal-safe.
 */
ssize_t raw_syscall__read_file(const char *path, char *buf, size_t cap)
{
	int fd = (int)raw_syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	size_t len = 0;
	ssize_t n;

	buf[0] = 0;
	if (fd < 0)
		return -errno;
	while (len < cap - 1) {
		n = raw_syscall(SYS_read, fd, buf + len, cap - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	fdtab__close(fd);
	buf[len] = 0;
	return (ssize_t)len;
}

bool raw_syscall__fits_fsize(uint64_t end)
{
	struct rlimit rl;

	if (raw_syscall(SYS_prlimit64, 0, RLIMIT_FSIZE, NULL, &rl) < 0)
		return true;
	return rl.rlim_cur == RLIM_INFINITY || end <= rl.rlim_cur;
}
