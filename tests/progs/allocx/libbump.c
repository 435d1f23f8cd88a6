/* An allocator of a shared library's own, as a program's allocator that
 * defines C23's free_sized and free_aligned_sized beside malloc (glibc 2.36
 * has neither): blocks carved from a static arena, a header before each
 * holding its size; its frees, free_sized's included, never call free
 * (memory-allocx.t). */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#define ARENA (64UL << 20)
static char arena[ARENA] __attribute__((aligned(4096)));
static size_t used; /* atomic */

static void *carve(size_t align, size_t n)
{
	size_t need, at;

	if (align < 16)
		align = 16;
	if (n > ARENA || align > 4096)
		return NULL;
	need = ((n + 15) & ~(size_t)15) + align + 16;
	at = __atomic_fetch_add(&used, need, __ATOMIC_RELAXED);
	if (at + need > ARENA)
		return NULL;
	at = (at + 16 + align - 1) & ~(align - 1);
	memcpy(arena + at - 16, &n, sizeof(n));
	return arena + at;
}

void *malloc(size_t n)
{
	void *p = carve(16, n);

	if (!p)
		errno = ENOMEM;
	return p;
}

void free(void *p)
{
	(void)p;
}

void free_sized(void *p, size_t n)
{
	(void)p, (void)n;
}

void free_aligned_sized(void *p, size_t align, size_t n)
{
	(void)p, (void)align, (void)n;
}

size_t malloc_usable_size(void *p)
{
	size_t n = 0;

	if (p)
		memcpy(&n, (char *)p - 16, sizeof(n));
	return n;
}

void *calloc(size_t n, size_t size)
{
	return size && n > SIZE_MAX / size ? NULL : malloc(n * size); /* the arena is zeroed */
}

void *realloc(void *p, size_t n)
{
	void *q = malloc(n);
	size_t old = malloc_usable_size(p);

	if (q && p)
		memcpy(q, p, old < n ? old : n);
	return q;
}

void *aligned_alloc(size_t align, size_t n)
{
	return carve(align, n);
}

void *memalign(size_t align, size_t n)
{
	return carve(align, n);
}

int posix_memalign(void **out, size_t align, size_t n)
{
	void *p = carve(align, n);

	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

void *valloc(size_t n)
{
	return carve(4096, n);
}

void *pvalloc(size_t n)
{
	return carve(4096, (n + 4095) & ~(size_t)4095);
}
