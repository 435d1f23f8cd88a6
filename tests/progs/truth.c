/*
 * truth.c - a program whose profile is known in advance, for the benchmark
 * (scripts/bench/bench.py). Three leaf functions of deliberately different
 * costs, each a different kind of work, each a fixed amount of it:
 *
 *   part_mul   a dependent chain of 64-bit multiply-adds     (about 55 %)
 *   part_div   a dependent chain of 64-bit divisions          (about 30 %)
 *   part_sqrt  a dependent chain of double square roots       (about 15 %)
 *
 * `truth all` calls the three in turn, a few tens of microseconds each, far below any
 * sampling period so samples cannot alias with the loop; `truth mul`, `truth
 * div` and `truth sqrt` run the same number of calls of one part alone, so the
 * CPU time of each alone is the true share of that part in `truth all`.
 * `truth forkexec` forks 8 children one after the other, each execs this
 * program with `all` and an eighth of the work: the same work as `all`, in 9
 * processes. Built -O2 without frame pointers by the Makefile.
 *
 * usage: truth all|mul|div|sqrt|forkexec [scale]   (default 1.0: about 1 s of CPU)
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define CALLS_PER_SCALE 20000L

static volatile uint64_t sink_u;
static volatile double sink_d;

__attribute__((noinline, noclone)) uint64_t part_mul(uint64_t x)
{
	for (int i = 0; i < 22000; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}

__attribute__((noinline, noclone)) uint64_t part_div(uint64_t x)
{
	uint64_t d = (x | 1) & 0xffffffULL;

	for (int i = 0; i < 1100; i++)
		x = x / (d | 3) + 0x9e3779b97f4a7c15ULL;
	return x;
}

__attribute__((noinline, noclone)) double part_sqrt(double y)
{
	for (int i = 0; i < 1500; i++)
		y = sqrt(y + 1.5);
	return y;
}

static __attribute__((noinline)) void run(const char *part, long calls)
{
	int mul = !strcmp(part, "all") || !strcmp(part, "mul");
	int div = !strcmp(part, "all") || !strcmp(part, "div");
	int sq = !strcmp(part, "all") || !strcmp(part, "sqrt");
	uint64_t x = 42, z = 7;
	double y = 2.0;

	if (!mul && !div && !sq) {
		fprintf(stderr, "truth: unknown part %s\n", part);
		exit(2);
	}
	for (long i = 0; i < calls; i++) {
		if (mul)
			x = part_mul(x);
		if (div)
			z = part_div(z ^ (uint64_t)i);
		if (sq)
			y = part_sqrt(y);
	}
	sink_u = x + z;
	sink_d = y;
}

static int forkexec(const char *self, double scale)
{
	char arg[64];

	snprintf(arg, sizeof(arg), "%.6f", scale / 8);
	for (int i = 0; i < 8; i++) {
		pid_t pid = fork();
		int status;

		if (pid < 0) {
			perror("truth: fork");
			return 1;
		}
		if (pid == 0) {
			execl(self, self, "all", arg, (char *)NULL);
			perror("truth: exec");
			_exit(127);
		}
		if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
			fprintf(stderr, "truth: child %d failed\n", i);
			return 1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	double scale = argc > 2 ? atof(argv[2]) : 1.0;

	if (argc < 2 || scale <= 0) {
		fprintf(stderr, "usage: truth all|mul|div|sqrt|forkexec [scale]\n");
		return 2;
	}
	if (!strcmp(argv[1], "forkexec")) {
		char self[4096];
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

		if (n <= 0) {
			perror("truth: /proc/self/exe");
			return 1;
		}
		self[n] = 0;
		return forkexec(self, scale);
	}
	run(argv[1], (long)(scale * CALLS_PER_SCALE));
	return 0;
}
