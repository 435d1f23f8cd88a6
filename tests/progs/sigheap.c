/* SPDX-License-Identifier: MIT */
/*
 * sigheap.c - a signal handler that forks, execs or exits while the main
 * loop is inside malloc and free (tests/preload-forkheap.t). POSIX makes
 * fork, execve and _exit async-signal-safe: the profiler's code on those
 * paths must not touch libc's heap, which the handler may have interrupted
 * half-updated. SIGALRM ticks every 2 ms (ITIMER_REAL) while the main thread
 * churns blocks of many sizes:
 *   sigheap fork N       each tick forks; the child _exits(0) at once, the
 *                        handler reaps it; after N ticks: "done N", exit 0
 *   sigheap forkexec N   each tick forks; the child execs /bin/true; the
 *                        handler reaps it; "done N" (and "bad K" when K
 *                        children did not exit 0)
 *   sigheap execmiss N   each tick execs a file that does not exist, or
 *                        (every other tick) a script whose interpreter does
 *                        not exist: the exec fails, the program goes on
 *                        (the library finishes its file for the second
 *                        kind only); "done N"
 *   sigheap exec N       the N-th tick execs /bin/true (which exits 0)
 *   sigheap exit N       the N-th tick _exits(7)
 *   sigheap execmissmt N  execmiss with two more threads churning (the tick
 *                        lands on any of the three)
 *   sigheap execmt N     exec with two more threads churning
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

#include "nointerp.h"

extern char **environ;

static volatile sig_atomic_t ticks, bad;
static int target;
static const char *mode, *nointerp;

static void on_tick(int sig)
{
	static char *const argv[] = {"true", NULL};
	int saved = errno;
	pid_t pid;
	int st;

	(void)sig;
	if (ticks >= target)
		return;
	ticks++;
	if (!strcmp(mode, "fork") || !strcmp(mode, "forkexec")) {
		pid = fork();
		if (pid == 0) {
			if (mode[4])
				execve("/bin/true", argv, environ);
			_exit(mode[4] ? 127 : 0);
		}
		if (pid > 0) {
			while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
				;
			if (!WIFEXITED(st) || WEXITSTATUS(st))
				bad++;
		}
	} else if (!strncmp(mode, "execmiss", 8)) {
		execve(ticks & 1 ? "/nonexistent/sigheap-missing" : nointerp, argv, environ);
	} else if (ticks == target) {
		if (!strncmp(mode, "exec", 4))
			execve("/bin/true", argv, environ);
		_exit(7);
	}
	errno = saved;
}

/* malloc, realloc and free blocks of many sizes until the ticks reach the target. */
static __attribute__((noipa)) void churn(void)
{
	void *slot[64] = {0};
	unsigned x = 1;

	while (ticks < target) {
		unsigned k = (x = x * 1103515245u + 12345u) >> 16;
		unsigned i = k % 64;

		if (slot[i] && (k & 0x100)) {
			void *p = realloc(slot[i], 16 + (k % 3000));

			if (p)
				slot[i] = p;
		} else {
			free(slot[i]);
			slot[i] = malloc(16 + ((k >> 6) % 5000));
			if (slot[i])
				memset(slot[i], (int)k, 16);
		}
	}
	for (int i = 0; i < 64; i++)
		free(slot[i]);
}

static void *churner(void *arg)
{
	(void)arg;
	churn();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[2];
	int nth = 0;
	struct sigaction sa;
	struct itimerval it = {{0, 2000}, {0, 2000}};

	mode = argc > 1 ? argv[1] : "fork";
	target = argc > 2 ? atoi(argv[2]) : 100;
	nointerp = nointerp_path();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_tick;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	if (!strcmp(mode, "execmissmt") || !strcmp(mode, "execmt"))
		for (; nth < 2; nth++)
			pthread_create(&th[nth], NULL, churner, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	churn();
	for (int i = 0; i < nth; i++)
		pthread_join(th[i], NULL);
	signal(SIGALRM, SIG_IGN);
	printf("done %d\n", (int)ticks);
	if (bad)
		printf("bad %d\n", (int)bad);
	return 0;
}
