// libctoralloc.c - preloaded after the library: its constructor runs before
// the profiler's own, so its allocations are made before profiling starts.
// ctor_site() leaks 1000 blocks of 1000 bytes on the main thread (1,000,000
// bytes, not in the profile: the profiler says so).
#include <stdlib.h>

void *ctor_kept[1000]; /* not static: the allocations must stay */

__attribute__((noinline)) void ctor_site(void)
{
	for (int i = 0; i < 1000; i++)
		ctor_kept[i] = malloc(1000);
}

__attribute__((constructor)) static void start(void)
{
	ctor_site();
}
