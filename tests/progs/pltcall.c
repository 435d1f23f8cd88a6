// SPDX-License-Identifier: MIT
/*
 * pltcall.c - spends time in PLT stubs. usage: pltcall [MILLIONS]
 *   pltcall --stub MS
 *
 * MILLIONS: a tight loop of calls to a tiny libc function (built with
 * -fno-builtin so strlen is a call through strlen@plt): the stub's share of
 * the samples varies with where the timer's interrupts fall (0-45 of 800).
 *
 * --stub MS: one call to strlen that stays MS milliseconds in strlen@plt.
 * Its GOT slot is pointed at the stub's own jump, so the jump loops on
 * itself with the stack a call through the stub has (the caller's return
 * address on top), until a second thread puts the slot back and the call
 * goes on into strlen. Every sample of the main thread meanwhile is in the
 * stub, whatever the timer's habits.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

struct got {
	uintptr_t *slot; /* strlen's GOT slot in the executable */
	uintptr_t jump;	 /* the stub's "jmp *slot(%rip)" */
};

/* dynamic addresses: glibc relocates the main program's in place, a
 * reader that did not would leave the link-time value (below the base) */
static uintptr_t dyn_addr(uintptr_t base, uintptr_t v)
{
	return v < base ? v + base : v;
}

static int find_got(struct dl_phdr_info *info, size_t size, void *data)
{
	struct got *g = data;
	uintptr_t base = info->dlpi_addr, jmprel = 0, symtab = 0, strtab = 0;
	size_t relsz = 0;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_DYNAMIC)
			continue;
		for (ElfW(Dyn) *d = (ElfW(Dyn) *)(base + ph->p_vaddr); d->d_tag != DT_NULL; d++) {
			if (d->d_tag == DT_JMPREL)
				jmprel = dyn_addr(base, d->d_un.d_ptr);
			else if (d->d_tag == DT_PLTRELSZ)
				relsz = d->d_un.d_val;
			else if (d->d_tag == DT_SYMTAB)
				symtab = dyn_addr(base, d->d_un.d_ptr);
			else if (d->d_tag == DT_STRTAB)
				strtab = dyn_addr(base, d->d_un.d_ptr);
		}
	}
	if (!jmprel || !symtab || !strtab)
		return 1; /* the executable comes first: stop there */
	const ElfW(Rela) *r = (const ElfW(Rela) *)jmprel;
	for (size_t i = 0; i < relsz / sizeof(*r); i++) {
		const ElfW(Sym) *s = (const ElfW(Sym) *)symtab + ELF64_R_SYM(r[i].r_info);
		if (strcmp((const char *)strtab + s->st_name, "strlen") == 0)
			g->slot = (uintptr_t *)(base + r[i].r_offset);
	}
	/* the stub: a "jmp *rel32(%rip)" (ff 25) in an executable segment whose
	 * target is the slot (in .plt, or .plt.sec after endbr64 and bnd) */
	for (int i = 0; g->slot && i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		const uint8_t *p = (const uint8_t *)(base + ph->p_vaddr);
		for (size_t k = 0; k + 6 <= ph->p_filesz && !g->jump; k++) {
			int32_t rel;
			if (p[k] != 0xff || p[k + 1] != 0x25)
				continue;
			memcpy(&rel, p + k + 2, 4);
			if ((uintptr_t)(p + k + 6 + rel) == (uintptr_t)g->slot)
				g->jump = (uintptr_t)(p + k);
		}
	}
	return 1;
}

struct restore {
	struct got *g;
	uintptr_t old;
	long ms;
};

static void *restorer(void *arg)
{
	struct restore *r = arg;
	struct timespec ts = {r->ms / 1000, r->ms % 1000 * 1000000L};

	while (nanosleep(&ts, &ts) != 0)
		;
	__atomic_store_n(r->g->slot, r->old, __ATOMIC_SEQ_CST);
	return NULL;
}

static int stub(long ms)
{
	struct got g = {0};
	const char *volatile s = "stub";

	dl_iterate_phdr(find_got, &g);
	if (!g.slot || !g.jump) {
		fprintf(stderr, "pltcall: no PLT stub for strlen in this executable\n");
		return 2;
	}
	long pg = sysconf(_SC_PAGESIZE);
	void *page = (void *)((uintptr_t)g.slot & ~(uintptr_t)(pg - 1));
	if (mprotect(page, (size_t)pg, PROT_READ | PROT_WRITE) != 0) {
		perror("pltcall: mprotect");
		return 2;
	}
	struct restore r = {&g, *g.slot, ms};
	pthread_t t;
	__atomic_store_n(g.slot, g.jump, __ATOMIC_SEQ_CST);
	if (pthread_create(&t, NULL, restorer, &r) != 0) {
		*g.slot = r.old;
		fprintf(stderr, "pltcall: pthread_create failed\n");
		return 2;
	}
	size_t n = strlen(s); /* loops in the stub until the thread restores */
	pthread_join(t, NULL);
	printf("%zu\n", n);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 2 && strcmp(argv[1], "--stub") == 0)
		return stub(atol(argv[2]));

	long n = (argc > 1 ? atol(argv[1]) : 100) * 1000000L;
	const char *volatile s = "x";
	size_t sum = 0;

	for (long i = 0; i < n; i++)
		sum += strlen(s);
	printf("%zu\n", sum);
	return 0;
}
