/* SPDX-License-Identifier: MIT */
/*
 * sigrun - run a command and print how it ended, core flag included:
 *   sigrun [-p LIB] [-k SIG -d MS] [-c] -- PROG ARGS...
 * -p: LD_PRELOAD=LIB for the command only; -k/-d: send SIG to it after MS ms
 * (by kill(2), from outside); -c: allow core dumps (RLIMIT_CORE unlimited
 * up to the hard limit). Prints "exit N" or "signal N core C" on stdout.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const char *lib = NULL;
	int sig = 0, ms = 0, core = 0, opt, status;
	pid_t pid;

	while ((opt = getopt(argc, argv, "+p:k:d:c")) != -1) {
		if (opt == 'p')
			lib = optarg;
		else if (opt == 'k')
			sig = atoi(optarg);
		else if (opt == 'd')
			ms = atoi(optarg);
		else if (opt == 'c')
			core = 1;
		else
			return 2;
	}
	if (optind >= argc)
		return 2;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		if (core) {
			struct rlimit r;

			getrlimit(RLIMIT_CORE, &r);
			r.rlim_cur = r.rlim_max;
			setrlimit(RLIMIT_CORE, &r);
		}
		if (lib)
			setenv("LD_PRELOAD", lib, 1);
		execvp(argv[optind], argv + optind);
		_exit(127);
	}
	if (sig) {
		struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

		nanosleep(&ts, NULL);
		kill(pid, sig);
	}
	if (waitpid(pid, &status, 0) < 0)
		return 2;
	if (WIFEXITED(status))
		printf("exit %d\n", WEXITSTATUS(status));
	else
		printf("signal %d core %d\n", WTERMSIG(status), WCOREDUMP(status) ? 1 : 0);
	return 0;
}
