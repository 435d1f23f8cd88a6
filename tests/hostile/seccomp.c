/* SPDX-License-Identifier: MIT */
/*
 * seccomp.c strict|filter
 *   strict  computes, enters SECCOMP_MODE_STRICT (read, write, _exit and
 *           sigreturn only), computes more, writes and leaves with SYS_exit.
 *   filter  installs a filter that makes perf_event_open and
 *           timer_create fail with EPERM (as container profiles do), then
 *           starts threads that compute.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hot.h"

static void *worker(void *arg)
{
	return (void *)(hostile_hot(100000000UL) & (long)arg);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "strict";

	hostile_hot(100000000UL);
	if (!strcmp(mode, "strict")) {
		char msg[64];
		int n;

		printf("entering strict mode\n");
		fflush(stdout);
		if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT, 0, 0, 0)) {
			printf("prctl failed: %s\n", strerror(errno));
			return 1;
		}
		n = snprintf(msg, sizeof(msg), "strict result %lu\n",
			     hostile_hot(300000000UL) & 0xff);
		write(1, msg, n);
		syscall(SYS_exit, 0);
	}
	struct sock_filter f[] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_perf_event_open, 2, 0),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_timer_create, 1, 0),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
	};
	struct sock_fprog prog = {sizeof(f) / sizeof(f[0]), f};
	pthread_t t[3];

	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		printf("filter failed: %s\n", strerror(errno));
		return 1;
	}
	for (long i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	errno = 0;
	printf("perf_event_open now: %ld %s\n", syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0),
	       strerror(errno));
	return 0;
}
