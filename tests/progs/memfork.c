/* SPDX-License-Identifier: MIT */
/*
 * memfork.c - fork and exec where a memory profile's tables may be held
 * (tests/memory-fork.t):
 *   memfork sigfork N   SIGALRM every 2 ms; its handler forks (the child
 *                       _exits at once, the handler waits for it) while the
 *                       main loop mallocs and frees; stops after N forks
 *   memfork sigexec N   N children one after the other, each churning with
 *                       the ticks, whose handler execs /bin/true at the 3rd
 *   memfork threadfork N  a thread forks N children (each frees, mallocs and
 *                       exits) while the main thread keeps 20000 blocks live
 *                       and churns them (they stay live at the end)
 *   memfork rng N       N children (forked from one thread) each allocate
 *                       64 KiB in 1-byte..64-byte blocks and exit: with a
 *                       sampling interval, their files' samples differ
 * Prints "done N" at the end (the forks or ticks seen).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t ticks, target;
static int failed_exec; /* sigexec: a child did not exit 0 */

static void on_alarm_fork(int sig)
{
	int saved = errno;
	pid_t pid;

	(void)sig;
	if (ticks >= target)
		return;
	pid = fork();
	if (pid == 0)
		_exit(0);
	if (pid > 0)
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	ticks++;
	errno = saved;
}

static void on_alarm_exec(int sig)
{
	static char *const argv[] = {"true", NULL};
	extern char **environ;

	(void)sig;
	if (++ticks >= target) {
		execve("/bin/true", argv, environ);
		_exit(3);
	}
}

static void ticking(void (*fn)(int))
{
	struct sigaction sa;
	struct itimerval it = {{0, 2000}, {0, 2000}};

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fn;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
}

/* malloc and free until ticks reach target (or a long time has passed). */
static __attribute__((noipa)) void churn(void)
{
	void *slot[256] = {0};
	unsigned x = 1;

	for (long i = 0; ticks < target && i < 2000000000L; i++) {
		unsigned k;

		x = x * 1103515245 + 12345;
		k = (x >> 8) & 255;
		free(slot[k]);
		slot[k] = malloc(16 + (x >> 20) % 200);
	}
	for (int k = 0; k < 256; k++)
		free(slot[k]);
}

static void *forker(void *arg)
{
	int n = *(int *)arg;

	for (int i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			free(malloc(100));
			exit(0);
		}
		if (pid > 0)
			waitpid(pid, NULL, 0);
		ticks++;
	}
	target = ticks;
	return NULL;
}

static __attribute__((noipa)) int threadfork(int n)
{
	enum { LIVE = 20000 };
	void **live = calloc(LIVE, sizeof(*live));
	pthread_t t;
	unsigned x = 7;

	for (int i = 0; i < LIVE; i++)
		live[i] = malloc(32 + i % 100);
	target = n + 1;
	pthread_create(&t, NULL, forker, &n);
	while (ticks < target) {
		unsigned k;

		x = x * 1103515245 + 12345;
		k = (x >> 8) % LIVE;
		free(live[k]);
		live[k] = malloc(32 + (x >> 20) % 100);
	}
	pthread_join(t, NULL);
	free(live); /* the blocks stay: the live set at the end */
	return 0;
}

static int rng(int n)
{
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			void *keep[1024];

			for (int j = 0; j < 1024; j++)
				keep[j] = malloc(1 + j % 64);
			for (int j = 0; j < 1024; j++)
				free(keep[j]);
			exit(0);
		}
		if (pid > 0)
			waitpid(pid, NULL, 0);
	}
	ticks = n;
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "sigfork";
	int n = argc > 2 ? atoi(argv[2]) : 200;

	setvbuf(stdout, NULL, _IONBF, 0);
	free(malloc(1)); /* the wrappers set up before the first tick */
	if (!strcmp(mode, "sigfork")) {
		target = n;
		ticking(on_alarm_fork);
		churn();
	} else if (!strcmp(mode, "sigexec")) {
		for (int i = 0; i < n; i++) {
			pid_t pid = fork();
			int status = -1;

			if (pid == 0) {
				target = 3;
				ticking(on_alarm_exec);
				for (;;)
					churn();
			}
			if (pid > 0)
				waitpid(pid, &status, 0);
			if (status != 0)
				failed_exec = 1;
		}
		ticks = n;
	} else if (!strcmp(mode, "threadfork")) {
		threadfork(n);
	} else if (!strcmp(mode, "rng")) {
		rng(n);
	} else {
		fprintf(stderr, "memfork: unknown mode %s\n", mode);
		return 2;
	}
	if (failed_exec)
		printf("a child failed\n");
	printf("done %d\n", (int)ticks);
	return 0;
}
