/* C23's free_sized and free_aligned_sized, which the program's allocator
 * (libbump.so) defines: malloc's and aligned_alloc's blocks freed by them
 * leave nothing live; 123456 bytes leak (memory-allocx.t). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void free_sized(void *p, size_t n);
void free_aligned_sized(void *p, size_t align, size_t n);

#define NI __attribute__((noinline))
static void *volatile keep;

/* 100 x 10000 + 100 x 6400 allocated, none live */
NI void churn_sized(void)
{
	for (int i = 0; i < 100; i++) {
		void *p = malloc(10000);

		memset(p, 1, 10000);
		free_sized(p, 10000);
	}
	for (int i = 0; i < 100; i++)
		free_aligned_sized(aligned_alloc(64, 6400), 64, 6400);
}

NI void leak_sized(void)
{
	keep = malloc(123456);
}

int main(void)
{
	churn_sized();
	leak_sized();
	printf("done\n");
	return 0;
}
