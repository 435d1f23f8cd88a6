/* SPDX-License-Identifier: MIT */
/*
 * stderr_fits.h - may a line go to stderr without SIGXFSZ? Shared by
 * common/log.c (raw system calls) and preload/memlib/ (libc's syscall()).
 */
#ifndef AUTOPROF_STDERR_FITS_H
#define AUTOPROF_STDERR_FITS_H

#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
 * May @len more bytes go to stderr? Not when it is a regular file that they
 * would take past RLIMIT_FSIZE, where the kernel's SIGXFSZ would kill the
 * program for a line of ours. @sys makes the system calls (six arguments
 * each). Async-signal-safe when @sys is.
 */
static inline bool stderr_fits(long (*sys)(long, ...), size_t len)
{
	struct rlimit rl;
	struct stat st;
	long pos, flags;

	if (sys(SYS_prlimit64, 0, RLIMIT_FSIZE, NULL, &rl, 0, 0) < 0 ||
	    rl.rlim_cur == RLIM_INFINITY)
		return true;
	if (sys(SYS_fstat, STDERR_FILENO, &st, 0, 0, 0, 0) < 0 || !S_ISREG(st.st_mode))
		return true; /* a terminal, a pipe: no file size */
	flags = sys(SYS_fcntl, STDERR_FILENO, F_GETFL, 0, 0, 0, 0);
	pos = flags >= 0 && (flags & O_APPEND)
		  ? st.st_size
		  : sys(SYS_lseek, STDERR_FILENO, 0, SEEK_CUR, 0, 0, 0);
	return pos >= 0 && (uint64_t)pos + len <= rl.rlim_cur;
}

#endif
