// memhostile.c - hostile cases for memory profiles (tests/memory-hostile.t),
// each at sites of its own with known sizes. Usage: memhostile MODE
//   oom   sets RLIMIT_AS to its address space now plus 64 MiB, leaks 6000
//         blocks of distinct sizes (18 MB) at leak_known (prints "site leak_known
//         BYTES"), then fills the address space at fill (1 MiB blocks, then
//         64 KiB, then 4 KiB, until malloc fails: "fill BYTES", which
//         differs from run to run) and exits with status 3, as a program
//         that ran out of memory does
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

/* The address space mapped now (statm's first field), in bytes. */
static size_t address_space(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	size_t pages = 0;

	if (f) {
		if (fscanf(f, "%zu", &pages) != 1)
			pages = 0;
		fclose(f);
	}
	return pages * 4096;
}

void *volatile last; /* not static: the allocations must stay */

__attribute__((noinline)) size_t leak_known(void)
{
	size_t bytes = 0;

	for (size_t i = 0; i < 6000; i++) {
		last = malloc(16 + i);
		if (!last)
			return 0;
		bytes += 16 + i;
	}
	return bytes;
}

__attribute__((noinline)) size_t fill(size_t size)
{
	size_t bytes = 0;

	while ((last = malloc(size)))
		bytes += size;
	return bytes;
}

static int oom(void)
{
	struct rlimit r = {address_space() + (64 << 20), RLIM_INFINITY};
	size_t filled = 0;

	if (setrlimit(RLIMIT_AS, &r)) {
		perror("setrlimit");
		return 1;
	}
	printf("site leak_known %zu\n", leak_known());
	for (size_t size = 1 << 20; size >= 4096; size /= 16) {
		filled += fill(size);
		if (errno != ENOMEM)
			printf("malloc failed with errno %d, not ENOMEM\n", errno);
	}
	printf("fill %zu\n", filled);
	return 3;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	if (!strcmp(mode, "oom"))
		return oom();
	fprintf(stderr, "usage: memhostile oom\n");
	return 2;
}
