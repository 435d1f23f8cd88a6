/* SPDX-License-Identifier: MIT */
/*
 * exec_note.c - one line when a profiled process runs a program the library
 * cannot enter: a statically linked one (no PT_INTERP, so no dynamic loader
 * reads LD_PRELOAD: gcc -static, musl, busybox, Go with CGO_ENABLED=0). Its
 * samples would be missing without a word; the line names it and the way
 * to profile it (`autoprof --outside`, doc/outside.md). Said at each such
 * exec or spawn, from the exec wrappers (process.c), before the exec (which
 * cannot say anything after it succeeds). Reads with pread only and
 * allocates nothing: usable in a vfork child. Not async-signal-safe.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "wrap.h"

/*
 * Say that process @pid (-1: this one) runs a static program: @file (found
 * in $PATH when @search, as execvp does), or the open file @fd (fexecve,
 * @file NULL). Nothing when profiling is off or does not follow execs, or
 * the program is dynamic, a script, or cannot be read.
 */
void exec_note__static(const char *file, int fd, bool search, pid_t pid)
{
	char path[PATH_MAX];
	bool is_static;

	if (!__atomic_load_n(&autoprof.active, __ATOMIC_ACQUIRE) || ap_quiet ||
	    !autoprof.cfg->follow)
		return; /* (AUTOPROF_FOLLOW=0: no child is profiled, static or not) */
	if (file) {
		if (search ? !elf_interp__resolve(file, path, sizeof(path))
			   : snprintf(path, sizeof(path), "%s", file) >= (int)sizeof(path))
			return;
		if (access(path, X_OK))
			return; /* the exec fails: nothing runs */
		is_static = elf_interp__static_program(path);
	} else {
		is_static = fd >= 0 && elf_interp__has(fd) == 0;
	}
	if (is_static)
		pr_warn("pid %d execs static binary %s: not profiled by the library; "
			"`autoprof --outside` profiles it",
			pid > 0 ? (int)pid : (int)getpid(), file ? file : "(fexecve)");
}
