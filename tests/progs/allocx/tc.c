/* tcmalloc's (gperftools) own entry points at known sites (declared here:
 * Debian's libtcmalloc-minimal4 ships no header), linked with
 * libtcmalloc_minimal.so.4 or libtcmalloc.so.4, and the standard names
 * whose tcmalloc functions call its tc_memalign through the PLT
 * (posix_memalign, valloc, pvalloc): every block's bytes are known,
 * allocated and live at the end (memory-allocx.t). */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *tc_malloc(size_t);
void *tc_malloc_skip_new_handler(size_t);
void tc_free(void *);
void tc_free_sized(void *, size_t);
void tc_cfree(void *);
void cfree(void *);
void *tc_calloc(size_t, size_t);
void *tc_realloc(void *, size_t);
void *tc_memalign(size_t, size_t);
int tc_posix_memalign(void **, size_t, size_t);
void *tc_valloc(size_t);
void *tc_pvalloc(size_t);
size_t tc_malloc_size(void *);
void *tc_new(size_t);
void *tc_newarray(size_t);
void *tc_new_nothrow(size_t, const void *);
void *tc_new_aligned(size_t, size_t);
void tc_delete(void *);
void tc_deletearray(void *);
void tc_delete_sized(void *, size_t);
void tc_deletearray_sized(void *, size_t);
void tc_delete_aligned(void *, size_t);
void tc_delete_nothrow(void *, const void *);

#define NI __attribute__((noinline))
static void *volatile keep[16];
static const char nothrow_tag;

/* 1000000 + 2000000 + 300000 + 400000 + 50000 + 65536 + 500 live */
NI void leak_tc(void)
{
	void *p = NULL;

	keep[0] = tc_malloc(1000000);
	keep[1] = tc_calloc(1000, 2000);
	keep[2] = tc_memalign(4096, 300000);
	tc_posix_memalign(&p, 64, 400000);
	keep[3] = p;
	keep[4] = tc_valloc(50000);
	keep[5] = tc_pvalloc(65536);
	keep[6] = tc_malloc_skip_new_handler(500);
}

/* 70000 + 80000 + 90000 + 4096 live */
NI void leak_tc_new(void)
{
	keep[7] = tc_new(70000);
	keep[8] = tc_newarray(80000);
	keep[9] = tc_new_nothrow(90000, &nothrow_tag);
	keep[10] = tc_new_aligned(4096, 256);
}

/* tc_malloc(100) moved by tc_realloc to 110000: 110100 allocated, 110000 live */
NI void leak_tc_realloc(void)
{
	keep[11] = tc_realloc(tc_malloc(100), 110000);
}

/* the standard names: 100000 + 200000 + 204800 live, each counted once */
NI void leak_std(void)
{
	void *p = NULL;

	posix_memalign(&p, 64, 100000);
	keep[12] = p;
	keep[13] = valloc(200000);
	keep[14] = pvalloc(204800);
}

/* malloc's and tc_new's blocks freed by every tc_ free and delete, and tc_malloc's by free:
 * 50 x (5000 + 6000 + 7000 + 8000 + 9000 + 11000 + 12000 + 13000 + 1024 + 3000) allocated,
 * none live */
NI void churn_tc(void)
{
	for (int i = 0; i < 50; i++) {
		tc_free(malloc(5000));
		tc_free_sized(malloc(6000), 6000);
		tc_cfree(malloc(7000));
		cfree(malloc(8000));
		tc_delete(malloc(9000));
		tc_deletearray_sized(malloc(11000), 11000);
		tc_delete_sized(tc_new(12000), 12000);
		tc_delete_nothrow(tc_newarray(13000), &nothrow_tag);
		tc_delete_aligned(tc_new_aligned(1024, 128), 128);
		free(tc_malloc(3000));
	}
}

int main(void)
{
	leak_tc();
	leak_tc_new();
	leak_tc_realloc();
	leak_std();
	churn_tc();
	printf("%d %d\n", tc_malloc_size(keep[0]) >= 1000000,
	       malloc_usable_size(keep[13]) >= 200000);
	return 0;
}
