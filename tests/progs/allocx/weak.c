/* A program that uses jemalloc's mallocx and C23's free_sized when they are
 * there (weak references, as programs that detect their allocator do), and
 * malloc & co else: with libautoprof-memory.so preloaded they are there
 * (its stand-ins over the C allocator), and its blocks are the same bytes
 * either way (memory-allocx.t). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *mallocx(size_t size, int flags) __attribute__((weak));
void *rallocx(void *p, size_t size, int flags) __attribute__((weak));
void dallocx(void *p, int flags) __attribute__((weak));
void free_sized(void *p, size_t n) __attribute__((weak));

#define NI __attribute__((noinline))
static void *volatile keep;
static int bad;

/* 400000 live, 4096-aligned and zeroed */
NI void leak_weak(void)
{
	char *p;

	if (mallocx)
		p = mallocx(400000, 12 | 0x40);
	else if ((p = aligned_alloc(4096, 400000)))
		memset(p, 0, 400000);
	for (size_t i = 0; p && i < 400000; i += 512)
		bad |= p[i];
	bad |= !p || ((uintptr_t)p & 4095);
	keep = p;
}

/* 100 x 3000 allocated, none live */
NI void churn_weak(void)
{
	for (int i = 0; i < 50; i++) {
		void *p = mallocx ? mallocx(3000, 0) : malloc(3000);

		if (dallocx)
			dallocx(p, 0);
		else
			free(p);
		p = malloc(3000);
		if (free_sized)
			free_sized(p, 3000);
		else
			free(p);
	}
}

/* 4096-aligned blocks moved by rallocx, larger then smaller: still aligned (realloc keeps 16) */
NI void realign_weak(void)
{
	for (int i = 0; mallocx && rallocx && dallocx && i < 50; i++) {
		char *p = mallocx(100, 12);

		bad |= !p || ((uintptr_t)p & 4095);
		p = p ? rallocx(p, 100000 + (size_t)i, 12) : NULL;
		bad |= !p || ((uintptr_t)p & 4095);
		p = p ? rallocx(p, 200, 12) : NULL;
		bad |= !p || ((uintptr_t)p & 4095);
		if (p)
			dallocx(p, 0);
	}
}

int main(void)
{
	leak_weak();
	churn_weak();
	realign_weak();
	printf("%s\n", bad ? "wrong" : "right");
	return 0;
}
