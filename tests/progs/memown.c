// memown.c - a program with an allocator of its own linked in (as programs
// built with jemalloc or tcmalloc statically are): malloc, free, calloc and
// realloc defined in the executable, where the loader binds every call, so
// a preloaded library cannot interpose them. Allocates 1000 blocks and
// prints "done". A request larger than its heap aborts (as xmalloc-style
// allocators do): nothing of ours may ever send it one.
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char heap[64 << 20] __attribute__((aligned(16)));
static size_t used;

void *malloc(size_t n)
{
	size_t at = (used + 15) & ~(size_t)15;

	if (n > sizeof(heap)) { /* as xmalloc-style allocators do: a request never met ends it */
		static const char msg[] = "memown: out of memory\n";

		if (write(2, msg, sizeof(msg) - 1) < 0)
			_exit(3);
		raise(SIGABRT);
		_exit(134);
	}
	if (at + n + 16 > sizeof(heap))
		return NULL;
	memcpy(heap + at, &n, sizeof(n));
	used = at + 16 + n;
	return heap + at + 16;
}

void free(void *p)
{
	(void)p;
}

/* Not turned into a call of calloc itself (GCC merges malloc + memset into calloc). */
__attribute__((optimize("no-optimize-strlen"))) void *calloc(size_t n, size_t m)
{
	void *p = n && m > ((size_t)-1) / n ? NULL : malloc(n * m);

	if (p)
		memset(p, 0, n * m);
	return p;
}

void *realloc(void *p, size_t n)
{
	void *q = malloc(n);
	size_t old;

	if (p && q) {
		memcpy(&old, (char *)p - 16, sizeof(old));
		memcpy(q, p, old < n ? old : n);
	}
	return q;
}

int main(void)
{
	for (int i = 0; i < 1000; i++) {
		char *volatile p = malloc(10000);
		p[0] = 1;
	}
	puts("done");
	return 0;
}
