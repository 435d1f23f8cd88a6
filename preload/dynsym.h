/* SPDX-License-Identifier: MIT */
/*
 * dynsym.h - the definitions of a dynamic symbol in every loaded object, in
 * load order (dl_iterate_phdr), each object's table read through its GNU
 * hash table: for C++'s operator new and delete, which both libraries need
 * beyond what dlsym gives (libautoprof-memory.so defines them itself, so
 * RTLD_DEFAULT finds its own, and RTLD_NEXT misses a libstdc++ that a
 * module dlopened with RTLD_LOCAL brought), and for malloc & co before the
 * memory library (link.c). Never a failed dlsym (whose message's malloc and
 * free reach a program's own). Header-only: the two libraries share no
 * object file. Not async-signal-safe (dl_iterate_phdr's lock).
 */
#ifndef AUTOPROF_DYNSYM_H
#define AUTOPROF_DYNSYM_H

#include <link.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* C++'s operator new and new[], every form (cxx.c's table starts with them, in its order). */
#define DYNSYM_NEW_NAMES                                                                           \
	"_Znwm", "_Znam", "_ZnwmRKSt9nothrow_t", "_ZnamRKSt9nothrow_t", "_ZnwmSt11align_val_t",    \
	    "_ZnamSt11align_val_t", "_ZnwmSt11align_val_tRKSt9nothrow_t",                          \
	    "_ZnamSt11align_val_tRKSt9nothrow_t"

/* Allocators' functions that call another entry point through the PLT (tcmalloc's
 * posix_memalign, valloc and pvalloc its tc_memalign): a sample's stack starts at their caller
 * too. */
#define DYNSYM_ALLOC_NAMES                                                                         \
	"posix_memalign", "__posix_memalign", "tc_posix_memalign", "valloc", "pvalloc",            \
	    "__libc_valloc", "__libc_pvalloc", "tc_valloc", "tc_pvalloc"

/* A definition: its address, size (0 when the table does not say), and its object's base. */
struct dynsym_def {
	uintptr_t addr;
	uint64_t size;
	uintptr_t base;
};

struct dynsym_walk {
	const char *name;
	uint32_t hash;
	struct dynsym_def *out;
	int max, n;
};

/* Is symbol s name, and a definition (not an undefined symbol: the canonical PLT entry of a
 * function whose address a non-PIE executable takes has a value, and no section)? */
static inline bool dynsym__defines(const ElfW(Sym) * s, const char *str, const char *name)
{
	return s->st_shndx != SHN_UNDEF && (s->st_value || s->st_shndx == SHN_ABS) &&
	       ELF64_ST_TYPE(s->st_info) != STT_TLS && !strcmp(str + s->st_name, name);
}

/*
 * name's definition in the object at base whose dynamic section is dyn, or
 * NULL: by its GNU hash table (which holds its definitions only), or its
 * SysV one (an executable linked with --hash-style=sysv).
 */
static inline const ElfW(Sym) *
    dynsym__in(uintptr_t base, const ElfW(Dyn) * dyn, const char *name, uint32_t h)
{
	const uint32_t *gnu = NULL, *sysv = NULL, *buckets, *chain;
	const ElfW(Sym) *sym = NULL;
	const char *str = NULL;
	uint32_t g;

	for (const ElfW(Dyn) *d = dyn; d && d->d_tag != DT_NULL; d++) {
		uintptr_t p = d->d_un.d_ptr; /* glibc relocates them in place, but the vdso's */

		p += p < base ? base : 0;
		if (d->d_tag == DT_GNU_HASH)
			gnu = (const uint32_t *)p;
		else if (d->d_tag == DT_HASH)
			sysv = (const uint32_t *)p;
		else if (d->d_tag == DT_SYMTAB)
			sym = (const ElfW(Sym) *)p;
		else if (d->d_tag == DT_STRTAB)
			str = (const char *)p;
	}
	if (!sym || !str)
		return NULL;
	if (gnu) {
		if (!gnu[0])
			return NULL;
		buckets = gnu + 4 + gnu[2] * (sizeof(ElfW(Addr)) / 4); /* after the Bloom filter */
		chain = buckets + gnu[0];
		for (uint32_t i = buckets[h % gnu[0]]; i && i >= gnu[1]; i++) {
			uint32_t c = chain[i - gnu[1]];

			if ((c | 1) == (h | 1) && dynsym__defines(&sym[i], str, name))
				return &sym[i];
			if (c & 1)
				break;
		}
		return NULL;
	}
	if (!sysv || !sysv[0])
		return NULL;
	h = 0;
	for (const char *c = name; *c; c++) {
		h = (h << 4) + (uint8_t)*c;
		g = h & 0xf0000000;
		h ^= g >> 24;
		h &= ~g;
	}
	for (uint32_t i = sysv[2 + h % sysv[0]]; i && i < sysv[1]; i = sysv[2 + sysv[0] + i])
		if (dynsym__defines(&sym[i], str, name))
			return &sym[i];
	return NULL;
}

static inline int dynsym__object(struct dl_phdr_info *info, size_t size, void *data)
{
	struct dynsym_walk *w = data;
	const ElfW(Sym) *s = NULL;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum && !s; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			s = dynsym__in(
			    info->dlpi_addr,
			    (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr),
			    w->name, w->hash);
	if (s && w->n < w->max)
		w->out[w->n++] =
		    (struct dynsym_def){info->dlpi_addr + s->st_value, s->st_size, info->dlpi_addr};
	return w->n >= w->max;
}

/* Up to max definitions of name in the loaded objects, in load order, into out; their number. */
static inline int dynsym__all(const char *name, struct dynsym_def *out, int max)
{
	struct dynsym_walk w = {.name = name, .hash = 5381, .out = out, .max = max};

	for (const char *c = name; *c; c++)
		w.hash = w.hash * 33 + (uint8_t)*c;
	if (max > 0)
		dl_iterate_phdr(dynsym__object, &w);
	return w.n;
}

/* name's definition in the object loaded at base (a dynsym_def's base), or 0. */
static inline uintptr_t dynsym__in_object(const char *name, uintptr_t base)
{
	struct dynsym_def d[8];
	int n = dynsym__all(name, d, 8);

	for (int k = 0; k < n; k++)
		if (d[k].base == base)
			return d[k].addr;
	return 0;
}

#endif /* AUTOPROF_DYNSYM_H */
