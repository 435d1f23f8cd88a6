// memexec.c - AUTOPROF_MEMORY across exec and the accuracy of small
// intervals. Usage: memexec MODE
//   exec      big_site() leaks 50 blocks of 1 MiB (touched), no CPU time to
//             speak of, then the program execs /bin/true
//   failexec  first_site() leaks 1 MiB, spins for 200 ms of CPU time, execv
//             of a script whose interpreter does not exist (fails after the
//             library finished its file: nointerp.h), then second_site()
//             leaks 2 MiB more and the program exits
//   smallexec few_site() leaks 1000 blocks of 1000 bytes (less than 1 MiB),
//             then the program execs /bin/true
//   smallfail less_site() leaks 100 blocks of 1000 bytes (less than an
//             interval), execv of nointerp.h's script (fails), then more_site()
//             leaks 100 blocks of 2000 bytes; the program exits
//   pathexec  less_site() leaks 100 blocks of 1000 bytes, then looks for
//             "true" in /nonexistent/a, /nonexistent/b, /bin as Python's
//             os.execvp does (an execv in each: two fail before the library
//             would finish its file), and runs it
//   small N   tiny_site() makes N allocations of 4 bytes (each freed at
//             once), prints "allocated BYTES" (the bytes asked for)
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nointerp.h"

void *keep[64]; /* not static: the allocations must stay */
int nkeep;

__attribute__((noinline)) void big_site(void)
{
	for (int i = 0; i < 50; i++) {
		keep[nkeep] = malloc(1 << 20);
		memset(keep[nkeep++], 1, 1 << 20);
	}
}

__attribute__((noinline)) void first_site(void)
{
	keep[nkeep] = malloc(1 << 20);
	memset(keep[nkeep++], 1, 1 << 20);
}

__attribute__((noinline)) void second_site(void)
{
	keep[nkeep] = malloc(2 << 20);
	memset(keep[nkeep++], 2, 2 << 20);
}

void *few_kept[1000]; /* not static: the allocations must stay */

__attribute__((noinline)) void few_site(void)
{
	for (int i = 0; i < 1000; i++)
		few_kept[i] = malloc(1000);
}

__attribute__((noinline)) void less_site(void)
{
	for (int i = 0; i < 100; i++)
		few_kept[i] = malloc(1000);
}

__attribute__((noinline)) void more_site(void)
{
	for (int i = 0; i < 100; i++)
		few_kept[500 + i] = malloc(2000);
}

__attribute__((noinline)) void tiny_site(long n)
{
	for (long i = 0; i < n; i++) {
		void *volatile p = malloc(4);

		free(p);
	}
}

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void spin(double seconds)
{
	volatile unsigned long x = 0;
	double end = cpu_now() + seconds;

	while (cpu_now() < end)
		for (int i = 0; i < 100000; i++)
			x += i;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "exec")) {
		big_site();
		execl("/bin/true", "true", (char *)NULL);
		perror("exec /bin/true");
		return 1;
	}
	if (argc >= 2 && !strcmp(argv[1], "smallexec")) {
		few_site();
		execl("/bin/true", "true", (char *)NULL);
		perror("exec /bin/true");
		return 1;
	}
	if (argc >= 2 && !strcmp(argv[1], "failexec")) {
		char *args[] = {"missing", NULL};

		first_site();
		spin(0.2);
		execv(nointerp_path(), args);
		second_site();
		printf("exec failed, %d blocks\n", nkeep);
		return 0;
	}
	if (argc >= 2 && !strcmp(argv[1], "smallfail")) {
		char *args[] = {"missing", NULL};

		less_site();
		execv(nointerp_path(), args);
		more_site();
		printf("exec failed\n");
		return 0;
	}
	if (argc >= 2 && !strcmp(argv[1], "pathexec")) {
		static const char *dirs[] = {"/nonexistent/a", "/nonexistent/b", "/bin"};
		char *args[] = {"true", NULL};
		char path[64];

		less_site();
		for (int i = 0; i < 3; i++) {
			snprintf(path, sizeof(path), "%s/true", dirs[i]);
			execv(path, args);
		}
		perror("exec true");
		return 1;
	}
	if (argc >= 3 && !strcmp(argv[1], "small")) {
		long n = atol(argv[2]);

		tiny_site(n);
		printf("allocated %ld\n", n * 4);
		return 0;
	}
	fprintf(stderr, "usage: memexec exec | smallexec | failexec | small N\n");
	return 2;
}
