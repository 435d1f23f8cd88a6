/* SPDX-License-Identifier: MIT */
/*
 * procs.c MODE - process life:
 *   forkstorm  200 forked children compute a little and exit with i % 100.
 *   vfork      50 vfork children reset every signal to SIG_DFL, unblock
 *              all, and exec `procs child` (or _exit on failure), while the
 *              parent computes between them.
 *   spawn      posix_spawn with POSIX_SPAWN_SETSIGDEF (all signals) and
 *              POSIX_SPAWN_SETSIGMASK (empty) of `procs child`.
 *   child      prints the dispositions and mask it was born with.
 *   churn      3000 short threads, two at a time.
 *   reexec     execs itself with FOO=changed added, which prints it back.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hot.h"

extern char **environ;

static void *tiny(void *arg)
{
	return (void *)(hostile_hot(20000UL) & (long)arg);
}

static int child_report(void)
{
	sigset_t m;
	int odd = 0;

	sigprocmask(SIG_SETMASK, NULL, &m);
	for (int s = 1; s < _NSIG; s++) {
		struct sigaction sa;

		if (sigismember(&m, s) == 1)
			printf("child: %d blocked\n", s);
		if (s == SIGKILL || s == SIGSTOP || (s > 31 && s < SIGRTMIN))
			continue;
		if (sigaction(s, NULL, &sa) == 0 && sa.sa_handler != SIG_DFL) {
			printf("child: %d has a handler\n", s);
			odd++;
		}
	}
	hostile_hot(5000000UL);
	printf("child ok%s\n", odd ? " (with handlers)" : "");
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "forkstorm";
	char *self = "/proc/self/exe";

	if (!strcmp(mode, "child"))
		return child_report();
	if (!strcmp(mode, "forkstorm")) {
		long sum = 0;

		for (int i = 0; i < 200; i++) {
			pid_t p = fork();

			if (p == 0) {
				hostile_hot(100000UL);
				exit(i % 100);
			}
			if (i % 4 == 3) {
				int st;

				while (wait(&st) > 0)
					sum += WEXITSTATUS(st);
			}
		}
		int st;

		while (wait(&st) > 0)
			sum += WEXITSTATUS(st);
		hostile_hot(100000000UL);
		printf("fork storm: status sum %ld\n", sum);
		return 0;
	}
	if (!strcmp(mode, "vfork")) {
		int ok = 0;

		fflush(stdout);
		for (int i = 0; i < 50; i++) {
			char *args[] = {self, "child", NULL};
			pid_t p = vfork();

			if (p == 0) {
				struct sigaction dfl;
				sigset_t none;

				memset(&dfl, 0, sizeof(dfl));
				dfl.sa_handler = SIG_DFL;
				for (int s = 1; s < _NSIG; s++)
					sigaction(s, &dfl, NULL);
				sigemptyset(&none);
				sigprocmask(SIG_SETMASK, &none, NULL);
				execve(self, args, environ);
				_exit(127);
			}
			hostile_hot(3000000UL);
			int st;

			if (waitpid(p, &st, 0) == p && WIFEXITED(st) && WEXITSTATUS(st) == 0)
				ok++;
			else if (WIFSIGNALED(st))
				printf("vfork child %d died of signal %d\n", i, WTERMSIG(st));
		}
		hostile_hot(100000000UL);
		printf("vfork children ok %d\n", ok);
		return 0;
	}
	if (!strcmp(mode, "spawn")) {
		posix_spawnattr_t a;
		sigset_t all, none;
		char *args[] = {self, "child", NULL};
		pid_t p;
		int st, r;

		sigfillset(&all);
		sigemptyset(&none);
		/* A handler and a blocked mask the child must not inherit. */
		signal(SIGUSR1, SIG_IGN);
		sigprocmask(SIG_BLOCK, &all, NULL);
		hostile_hot(100000000UL);
		fflush(stdout);
		posix_spawnattr_init(&a);
		posix_spawnattr_setflags(&a, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
		posix_spawnattr_setsigdefault(&a, &all);
		posix_spawnattr_setsigmask(&a, &none);
		r = posix_spawn(&p, self, NULL, &a, args, environ);
		if (r) {
			printf("posix_spawn: %s\n", strerror(r));
			return 1;
		}
		waitpid(p, &st, 0);
		printf("spawned child: %s %d\n", WIFSIGNALED(st) ? "signal" : "exit",
		       WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
		return 0;
	}
	if (!strcmp(mode, "churn")) {
		long made = 0;

		for (int i = 0; i < 1500; i++) {
			pthread_t a, b;

			made += pthread_create(&a, NULL, tiny, (void *)1L) == 0;
			made += pthread_create(&b, NULL, tiny, (void *)2L) == 0;
			pthread_join(a, NULL);
			pthread_join(b, NULL);
		}
		hostile_hot(100000000UL);
		printf("threads made %ld\n", made);
		return 0;
	}
	if (!strcmp(mode, "reexec")) {
		const char *foo = getenv("FOO");

		hostile_hot(100000000UL);
		if (foo) {
			printf("second image, FOO=%s, argc %d\n", foo, argc);
			return 5;
		}
		printf("first image\n");
		fflush(stdout);
		setenv("FOO", "changed", 1);
		char *args[] = {self, "reexec", "again", NULL};

		execv(self, args);
		perror("execv");
		return 1;
	}
	return 2;
}
