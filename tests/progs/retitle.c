/* SPDX-License-Identifier: MIT */
/*
 * retitle - fork a child that writes its title over argv (as nginx and
 * postgres workers do: "retitle-child-title" in /proc/self/cmdline), spin a
 * little in both, and wait for the child.
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static void spin(void)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	do {
		for (int i = 0; i < 10000; i++)
			sink += (unsigned long)i * 7;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < 50);
}

int main(int argc, char **argv)
{
	pid_t pid;
	int status;

	spin();
	pid = fork();
	if (pid == 0) {
		/* The arguments are contiguous: the title takes their room. */
		size_t room = (size_t)(argv[argc - 1] + strlen(argv[argc - 1]) - argv[0]);
		const char *title = "retitle-child-title";

		memset(argv[0], 0, room);
		memcpy(argv[0], title, strlen(title) < room ? strlen(title) : room - 1);
		spin();
		return 0;
	}
	spin();
	waitpid(pid, &status, 0);
	puts("done");
	return 0;
}
