/* SPDX-License-Identifier: MIT */
/*
 * rawclone.c - threads made with clone(2) directly (as Go's runtime and
 * green-thread libraries do), not pthread_create: two of them compute in
 * clone_hot while the main thread only waits on their tid futexes.
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define STACK (256 * 1024)

static volatile unsigned long results[2];

/* The clone threads' work: touches no libc state (they share the main TLS). */
__attribute__((noinline)) static unsigned long clone_hot(unsigned long n)
{
	volatile unsigned long x = 1;

	for (unsigned long i = 0; i < n; i++)
		x = x * 2862933555777941757UL + (i ^ (x >> 13));
	return x;
}

static int body(void *arg)
{
	long i = (long)arg;

	results[i] = clone_hot(300000000UL);
	return 0;
}

int main(void)
{
	pid_t tids[2];

	for (long i = 0; i < 2; i++) {
		char *stack = mmap(NULL, STACK, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);

		tids[i] = clone(body, stack + STACK,
				CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
				    CLONE_SYSVSEM | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID,
				(void *)i, &tids[i], NULL, &tids[i]);
		if (tids[i] < 0) {
			perror("clone");
			return 1;
		}
	}
	for (int i = 0; i < 2; i++) {
		pid_t t;

		while ((t = __atomic_load_n(&tids[i], __ATOMIC_ACQUIRE)) != 0)
			syscall(SYS_futex, &tids[i], FUTEX_WAIT, t, NULL, NULL, 0);
	}
	printf("clone threads done: %lu\n", (results[0] ^ results[1]) & 0xff);
	return 0;
}
