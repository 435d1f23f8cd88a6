/* SPDX-License-Identifier: MIT */
/*
 * execbad.c - execs the kernel refuses for a bad address (EFAULT), or for
 * the path before it reads a bad environment (ENOENT): by every door
 * (execve, execveat, fexecve, syscall()). Prints each return and errno; the
 * same lines with and without the library.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static void say(const char *what, int r)
{
	printf("%s: %d %s\n", what, r, r < 0 ? strerror(errno) : "");
	fflush(stdout);
}

int main(void)
{
	char *argv[] = {"x", NULL};
	char *const *volatile bad = (char *const *)1; /* (volatile: no warning of the compiler's) */
	const char *volatile bad_path = (const char *)1;
	const char *volatile no_path = NULL;
	char *bad_elem[] = {"A=1", (char *)1, NULL};

	say("execve envp=1", execve("/nonexistent", argv, bad));
	say("execve path=1", execve(bad_path, argv, argv + 1));
	say("execve env element=1", execve("/nonexistent", argv, bad_elem));
	say("execveat path=NULL", execveat(AT_FDCWD, no_path, argv, argv + 1, 0));
	say("fexecve envp=1", fexecve(0, argv, bad));
	say("syscall execve envp=1", (int)syscall(SYS_execve, "/nonexistent", argv, bad));
	say("syscall execveat path=1",
	    (int)syscall(SYS_execveat, AT_FDCWD, bad_path, argv, NULL, 0));
	return 0;
}
