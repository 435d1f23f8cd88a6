// SPDX-License-Identifier: MIT
/*
 * jitmap.c - a tiny "JIT": after start it maps an anonymous executable page,
 * writes two counting loops into it (x86-64 machine code), runs them and
 * describes them in /tmp/perf-PID.map as node --perf-basic-prof does.
 *
 * usage: jitmap [LOOPS]  (hot loop LOOPS million times, cold a tenth of it)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* mov rcx, rdi; 1: dec rcx; jnz 1b; ret */
static const unsigned char spin[] = {0x48, 0x89, 0xf9, 0x48, 0xff, 0xc9, 0x75, 0xfb, 0xc3};

int main(int argc, char **argv)
{
	long loops = (argc > 1 ? atol(argv[1]) : 300) * 1000000L;
	unsigned char *page;
	void (*hot)(long), (*cold)(long);
	char path[64];
	FILE *f;

#ifndef __x86_64__
	fprintf(stderr, "jitmap: x86-64 only\n");
	return 77;
#endif
	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return 1;
	memcpy(page, spin, sizeof(spin));
	memcpy(page + 256, spin, sizeof(spin));
	if (mprotect(page, 4096, PROT_READ | PROT_EXEC))
		return 1;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	f = fopen(path, "w");
	if (!f)
		return 1;
	fprintf(f, "%lx %zx jit_hot_loop\n", (unsigned long)page, sizeof(spin));
	fprintf(f, "%lx %zx jit_cold_loop\n", (unsigned long)(page + 256), sizeof(spin));
	fclose(f);
	*(void **)&hot = page;
	*(void **)&cold = page + 256;
	hot(loops);
	cold(loops / 10);
	printf("%d\n", (int)getpid());
	return 0;
}
