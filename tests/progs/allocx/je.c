/* jemalloc's own API at known sites (declared here: Debian's libjemalloc2
 * ships no header), linked with libjemalloc.so.2: every block's bytes are
 * known, allocated and live at the end (memory-allocx.t). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *mallocx(size_t size, int flags);
void *rallocx(void *p, size_t size, int flags);
size_t xallocx(void *p, size_t size, size_t extra, int flags);
size_t sallocx(const void *p, int flags);
void dallocx(void *p, int flags);
void sdallocx(void *p, size_t size, int flags);
size_t nallocx(size_t size, int flags);
#define MALLOCX_LG_ALIGN(la) ((int)(la))
#define MALLOCX_ZERO	     ((int)0x40)

#define NI __attribute__((noinline))
static void *volatile keep[8];
static int bad;

/* live 3000000: aligned to 4096, zeroed */
NI void leak_mallocx(void)
{
	char *p = mallocx(3000000, MALLOCX_LG_ALIGN(12) | MALLOCX_ZERO);

	for (size_t i = 0; i < 3000000; i += 4096)
		bad |= p[i];
	bad |= (uintptr_t)p & 4095;
	keep[0] = p;
}

/* malloc's blocks freed by dallocx and sdallocx: 1000000 + 2000000 allocated, none live */
NI void churn_dallocx(void)
{
	for (int i = 0; i < 100; i++) {
		void *p = malloc(10000);

		memset(p, 1, 10000);
		dallocx(p, 0);
	}
	for (int i = 0; i < 100; i++)
		sdallocx(malloc(20000), 20000, 0);
}

/* mallocx's blocks freed by free, and by dallocx with the same flags: 3000000 + 500000 */
NI void churn_mallocx(void)
{
	for (int i = 0; i < 100; i++)
		free(mallocx(30000, 0));
	for (int i = 0; i < 100; i++)
		dallocx(mallocx(5000, MALLOCX_LG_ALIGN(6)), MALLOCX_LG_ALIGN(6));
}

/* malloc(1000) moved by rallocx to 500000 bytes: 501000 allocated, 500000 live */
NI void leak_rallocx(void)
{
	keep[1] = rallocx(malloc(1000), 500000, 0);
}

/* a block resized by rallocx, then freed by sdallocx: 7000 + 9000 allocated, none live */
NI void churn_rallocx(void)
{
	void *p = rallocx(mallocx(7000, 0), 9000, MALLOCX_ZERO);

	sdallocx(p, 9000, 0);
}

/* xallocx in place: 100000 asked down to 50000 (shrunk, or the block kept: 50000 either
 * way), and 60000 that cannot grow to 1 GiB (left as it was): 210000 allocated, 110000 live */
NI void leak_xallocx(void)
{
	void *p = mallocx(100000, 0), *q = mallocx(60000, 0);

	bad |= xallocx(p, 50000, 0, 0) < 50000;
	bad |= xallocx(q, 1 << 30, 0, 0) >= (1 << 30);
	keep[2] = p;
	keep[3] = q;
}

int main(void)
{
	leak_mallocx();
	churn_dallocx();
	churn_mallocx();
	leak_rallocx();
	churn_rallocx();
	leak_xallocx();
	printf("%s sallocx %d nallocx %zu\n", bad ? "wrong" : "right",
	       sallocx(keep[0], 0) >= 3000000, nallocx(100, 0));
	return 0;
}
