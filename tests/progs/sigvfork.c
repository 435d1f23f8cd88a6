/* SPDX-License-Identifier: MIT */
/*
 * sigvfork - children that share our memory: a vfork child that does what
 * Python's _posixsubprocess does before exec (every handler back to SIG_DFL,
 * a handler set on the sampling signal, masks changed, signal() called),
 * then posix_spawn with POSIX_SPAWN_SETSIGDEF, while the parent keeps
 * working. Prints what the parent sees afterwards.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;
static volatile unsigned long sink;

static void spin(double ms)
{
	struct timespec a, b;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	do {
		for (int i = 0; i < 10000; i++)
			sink += (unsigned long)i * 3;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	} while ((b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6 < ms);
}

static void on_sig(int sig)
{
	(void)sig;
}

int main(void)
{
	char *argv[] = {"true", NULL};
	posix_spawnattr_t attr;
	sigset_t all, cur;
	int status;
	pid_t pid;

	setvbuf(stdout, NULL, _IOLBF, 0);
	spin(50);
	for (int round = 0; round < 3; round++) {
		pid = vfork();
		if (pid == 0) {
			struct sigaction sa;

			sigfillset(&all);
			sigprocmask(SIG_BLOCK, &all, NULL);
			for (int s = 1; s < NSIG; s++) {
				if (s == SIGKILL || s == SIGSTOP || s == 32 || s == 33)
					continue;
				memset(&sa, 0, sizeof(sa));
				sa.sa_handler = SIG_DFL;
				sigaction(s, &sa, NULL);
			}
			signal(SIGRTMIN + 5, on_sig);
			memset(&sa, 0, sizeof(sa));
			sa.sa_handler = on_sig;
			sigaction(SIGRTMIN + 4, &sa, NULL);
			sigemptyset(&all);
			sigaddset(&all, SIGRTMIN + 5);
			sigprocmask(SIG_SETMASK, &all, NULL);
			execve("/bin/true", argv, environ);
			_exit(127);
		}
		waitpid(pid, &status, 0);
		printf("vfork child: %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		spin(50);
	}
	posix_spawnattr_init(&attr);
	sigfillset(&all);
	posix_spawnattr_setsigdefault(&attr, &all);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
	if (posix_spawn(&pid, "/bin/true", NULL, &attr, argv, environ) == 0) {
		waitpid(pid, &status, 0);
		printf("spawned: %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	}
	spin(100);
	for (int s = SIGRTMIN + 3; s <= SIGRTMIN + 6; s++) {
		struct sigaction old;

		sigaction(s, NULL, &old);
		printf("%d: %s\n", s - SIGRTMIN, old.sa_handler == SIG_DFL ? "DFL" : "other");
	}
	sigprocmask(SIG_BLOCK, NULL, &cur);
	printf("RTMIN+5 blocked: %d\n", sigismember(&cur, SIGRTMIN + 5));
	printf("ok\n");
	return 0;
}
