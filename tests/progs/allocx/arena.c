/* A program with an allocator of its own, linked in under names of its own
 * (as Rust's jemallocator links jemalloc with a prefix): arena_alloc carves
 * blocks out of one anonymous mapping; only a few small blocks come from
 * malloc. 96 MiB of arena blocks, touched, held at the end. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define ARENA (128UL << 20)
static char *base;
static size_t used;

static __attribute__((noinline)) void *arena_alloc(size_t n)
{
	void *p;

	if (!base && (base = mmap(NULL, ARENA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				  -1, 0)) == MAP_FAILED)
		return NULL;
	if (used + n > ARENA)
		return NULL;
	p = base + used;
	used += (n + 15) & ~15UL;
	return p;
}

int main(void)
{
	size_t total = 0;
	char *small = malloc(1000);

	for (int i = 0; i < 96; i++) {
		char *p = arena_alloc(1 << 20);

		if (!p)
			return 1;
		memset(p, i + 1, 1 << 20);
		total += 1 << 20;
	}
	memset(small, 1, 1000);
	printf("%zu bytes from the arena\n", total);
	return 0;
}
