/* SPDX-License-Identifier: MIT */
/*
 * hot.c - the C program outside.t profiles from outside, built static (gcc
 * -static -O2, so no frame pointers; musl-gcc -static) and dynamic. Modes:
 *   hot [N]            main -> hot_mid -> hot_leaf for about N*0.1 s; exit 3
 *   hot clone N        2 threads made with raw clone (no CLONE_SETTLS) and,
 *                      with N=tls, with CLONE_SETTLS: they compute in
 *                      clone_leaf (60M steps each, times K with `hot clone
 *                      tls K`); the program ends by a raw exit_group(5)
 *   hot fork PROGRAM   forks twice, each child execs PROGRAM (a static one)
 *                      with "2"; waits; exit 0
 *   hot signal         hot_mid for about 0.2 s, then dies of SIGTERM
 *   hot zero           zero_read: 60000 reads of 256 KiB from /dev/zero (the
 *                      time is the kernel's); exit 0
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define STACK (256 * 1024)

static volatile double sink;
static volatile int done[2];
static unsigned long clone_steps = 60000000UL;

__attribute__((noinline)) double hot_leaf(double x)
{
	for (int i = 0; i < 2000; i++)
		x = x * 1.0000001 + 0.5;
	return x;
}

__attribute__((noinline)) double hot_mid(long n)
{
	double s = 0;

	for (long i = 0; i < n; i++)
		s += hot_leaf((double)i);
	return s;
}

/* No libc in the clone threads: they may have no TLS of their own. */
__attribute__((noinline)) unsigned long clone_leaf(unsigned long n)
{
	volatile unsigned long x = 1;

	for (unsigned long i = 0; i < n; i++)
		x = x * 2862933555777941757UL + (i ^ (x >> 13));
	return x;
}

static int clone_body(void *arg)
{
	long i = (long)arg;

	clone_leaf(clone_steps);
	__atomic_store_n(&done[i], 1, __ATOMIC_RELEASE);
	syscall(SYS_exit, 0);
	return 0;
}

static int clones(int tls)
{
	static char tls_area[2][4096] __attribute__((aligned(64)));
	int flags =
	    CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM;

	for (long i = 0; i < 2; i++) {
		char *stack = mmap(NULL, STACK, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
		int f = flags | (tls && i == 1 ? CLONE_SETTLS : 0);

		if (stack == MAP_FAILED || clone(clone_body, stack + STACK, f, (void *)i, NULL,
						 tls_area[i] + 2048, NULL) < 0) {
			perror("clone");
			return 1;
		}
	}
	sink = hot_mid(200);
	while (!__atomic_load_n(&done[0], __ATOMIC_ACQUIRE) ||
	       !__atomic_load_n(&done[1], __ATOMIC_ACQUIRE))
		sched_yield();
	syscall(SYS_exit_group, 5);
	return 1;
}

/* Reads that spend their time in the kernel (-k stacks: kernel frames over main's). */
__attribute__((noinline)) int zero_read(void)
{
	static char buf[256 * 1024];
	int fd = open("/dev/zero", O_RDONLY);

	for (int i = 0; fd >= 0 && i < 60000; i++)
		if (read(fd, buf, sizeof(buf)) <= 0)
			return 1;
	return fd < 0;
}

static int forks(const char *program)
{
	int status, bad = 0;

	for (int i = 0; i < 2; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			execl(program, program, "2", (char *)NULL);
			_exit(127);
		}
		if (pid < 0)
			return 1;
	}
	while (wait(&status) > 0)
		bad |= !WIFEXITED(status) || WEXITSTATUS(status) != 3;
	return bad;
}

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "clone")) {
		if (argc > 3 && atol(argv[3]) > 0)
			clone_steps *= (unsigned long)atol(argv[3]);
		return clones(!strcmp(argv[2], "tls"));
	}
	if (argc > 2 && !strcmp(argv[1], "fork"))
		return forks(argv[2]);
	if (argc > 1 && !strcmp(argv[1], "zero"))
		return zero_read();
	if (argc > 1 && !strcmp(argv[1], "signal")) {
		sink = hot_mid(50000L);
		raise(SIGTERM);
		return 1;
	}
	sink = hot_mid(argc > 1 ? 25000L * atol(argv[1]) : 50000L);
	return 3;
}
