// memcxxalloc.cpp - every form of operator new and delete, for a build
// linked with jemalloc or tcmalloc (whose own new never calls malloc) as
// with glibc's. Each site's bytes are known exactly: leak_new leaks 64 x
// 1 MiB (new[], touched), leak_malloc 8 MiB (malloc), leak_aligned 16
// blocks of 4096 bytes aligned to 256 (aligned new), leak_nothrow 10 x
// 100000 (nothrow new[]); churn() allocates with every form and deletes
// each (plain, sized, aligned, nothrow; nothing left); a new of a size no
// allocator grants throws std::bad_alloc, caught. Prints what it saw and
// exits with 3.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

struct alignas(256) Block {
	char data[4096];
};

char *kept[64];
void *kept_m;
Block *kept_a[16];
char *kept_nt[10];
volatile size_t huge = ~(size_t)0 / 4;

// p escapes: the compiler may not elide a new and its delete (C++14 lets it).
template <class T> static inline T *keep(T *p)
{
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

__attribute__((noinline)) void leak_new()
{
	for (int i = 0; i < 64; i++) {
		kept[i] = new char[1 << 20];
		memset(kept[i], 1, 1 << 20);
	}
}

__attribute__((noinline)) void leak_malloc()
{
	kept_m = malloc(8 << 20);
	memset(kept_m, 2, 8 << 20);
}

__attribute__((noinline)) void leak_aligned()
{
	for (int i = 0; i < 16; i++)
		kept_a[i] = new Block;
}

__attribute__((noinline)) void leak_nothrow()
{
	for (int i = 0; i < 10; i++)
		kept_nt[i] = new (std::nothrow) char[100000];
}

__attribute__((noinline)) unsigned churn()
{
	unsigned sum = 0;

	for (int i = 0; i < 1000; i++) {
		long *a = keep(new long(i));
		int *b = keep(new int[100]);
		Block *c = keep(new Block);
		Block *d = keep(new Block[3]);
		char *e = keep(new (std::nothrow) char[50]);
		Block *f = keep(new (std::nothrow) Block);
		void *g = keep(::operator new(320, std::align_val_t(64)));
		void *h = keep(::operator new[](512, std::align_val_t(128), std::nothrow));

		b[99] = i;
		sum += (unsigned)*a + (unsigned)b[99] + (unsigned)((size_t)c % 256) +
		       (unsigned)((size_t)g % 64) + (unsigned)((size_t)h % 128);
		delete a; // sized (C++14)
		delete[] b;
		delete c; // aligned, sized
		delete[] d;
		delete[] e;
		delete f;
		::operator delete(g, 320, std::align_val_t(64));
		::operator delete[](h, std::align_val_t(128), std::nothrow);
	}
	return sum;
}

int main()
{
	leak_new();
	leak_malloc();
	leak_aligned();
	leak_nothrow();
	std::printf("churn %u\n", churn());
	try {
		char *p = new char[huge];
		std::printf("huge new gave %p\n", (void *)p);
	} catch (const std::bad_alloc &e) {
		std::printf("bad_alloc caught\n");
	}
	std::printf("aligned %s\n", (size_t)kept_a[3] % 256 ? "no" : "yes");
	std::printf("nothrow %s\n", kept_nt[9] ? "yes" : "no");
	return 3;
}
