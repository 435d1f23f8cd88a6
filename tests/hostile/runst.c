/* SPDX-License-Identifier: MIT */
/*
 * runst.c - run a command and report how it ended, for tests/hostile.t.
 *
 *   runst -o FILE [-t SECONDS] [-s SIG@MS]... [-e NAME=VALUE]... -- COMMAND [ARGS...]
 *
 * Runs COMMAND as a child in its own process group with the NAME=VALUE
 * settings added to its environment (so runst itself is never profiled),
 * sends signal SIG to the child MS milliseconds after the start for each
 * -s, and writes one line to FILE: "exit N", "signal N core C" (C from
 * WCOREDUMP) or "timeout" when the child ran longer than SECONDS (default
 * 60); then the whole process group is killed with SIGKILL.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct shot {
	int sig;
	long ms;
	int done;
};

static long now_ms(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

int main(int argc, char **argv)
{
	struct shot shots[16];
	int nshots = 0, opt, status;
	long limit_ms = 60000;
	struct timespec t0;
	const char *out = NULL;
	FILE *st;
	pid_t pid;

	while ((opt = getopt(argc, argv, "+o:t:s:e:")) != -1) {
		switch (opt) {
		case 'o':
			out = optarg;
			break;
		case 't':
			limit_ms = atol(optarg) * 1000;
			break;
		case 's':
			if (nshots < 16 &&
			    sscanf(optarg, "%d@%ld", &shots[nshots].sig, &shots[nshots].ms) == 2)
				shots[nshots++].done = 0;
			break;
		case 'e':
			putenv(optarg);
			break;
		default:
			return 125;
		}
	}
	if (optind >= argc || !out) {
		fprintf(stderr, "usage: runst -o FILE [-t S] [-s SIG@MS] [-e N=V] -- CMD...\n");
		return 125;
	}
	st = fopen(out, "w");
	if (!st) {
		perror(out);
		return 125;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid = fork();
	if (pid == 0) {
		fclose(st);
		setpgid(0, 0);
		/* As a terminal's foreground job has them: a shell that ran us in the
		 * background (no job control) left SIGINT and SIGQUIT ignored. */
		signal(SIGINT, SIG_DFL);
		signal(SIGQUIT, SIG_DFL);
		execvp(argv[optind], argv + optind);
		perror(argv[optind]);
		_exit(127);
	}
	setpgid(pid, pid);
	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);
		long t = now_ms(&t0);

		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			perror("waitpid");
			return 125;
		}
		for (int i = 0; i < nshots; i++)
			if (!shots[i].done && t >= shots[i].ms) {
				kill(pid, shots[i].sig);
				shots[i].done = 1;
			}
		if (t > limit_ms) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			fprintf(st, "timeout\n");
			fclose(st);
			return 0;
		}
		usleep(2000);
	}
	/* Leftover descendants (a fork storm's stragglers) must not outlive the case. */
	kill(-pid, SIGKILL);
	if (WIFSIGNALED(status))
		fprintf(st, "signal %d core %d\n", WTERMSIG(status), WCOREDUMP(status) ? 1 : 0);
	else
		fprintf(st, "exit %d\n", WEXITSTATUS(status));
	fclose(st);
	return 0;
}
