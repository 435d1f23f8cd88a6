/* SPDX-License-Identifier: MIT */
/*
 * deaths.c MODE - compute, then end abruptly: quick_exit, exit_group (raw
 * syscall), sigpipe (write to a pipe without reader), sigalrm (alarm while
 * computing), sigusr1 (raise), segv (null store), abort. The profile must
 * still be a finished file.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hot.h"

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	unsigned long r = hostile_hot(300000000UL);

	printf("computed %lu\n", r & 0xff);
	fflush(stdout);
	if (!strcmp(mode, "quick_exit"))
		quick_exit(7);
	if (!strcmp(mode, "exit_group"))
		syscall(SYS_exit_group, 9);
	if (!strcmp(mode, "sigpipe")) {
		int p[2];

		if (pipe(p) == 0) {
			close(p[0]);
			write(p[1], "x", 1);
		}
	}
	if (!strcmp(mode, "sigalrm")) {
		alarm(1);
		for (;;)
			hostile_hot(10000000UL);
	}
	if (!strcmp(mode, "sigusr1"))
		raise(SIGUSR1);
	if (!strcmp(mode, "segv"))
		*(volatile int *)(long)argc = 0;
	if (!strcmp(mode, "abort"))
		abort();
	printf("survived %s\n", mode);
	return 3;
}
