/* SPDX-License-Identifier: MIT */
/*
 * link.c - libautoprof-memory.so's start and its link to libautoprof.so
 * (memory_link.h): the constructor looks the real functions up and sees
 * whether libautoprof.so is loaded too (alone, this library passes every
 * call through and says once what is missing); libautoprof.so, when it
 * profiles memory, calls AP_MEMORY_LINK_SYM, which keeps its slow paths and
 * hands it the controls.
 */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <string.h>
#include <unistd.h>

#include "autoprof/env.h"
#include "memlib.h"

/* A lookup of a symbol's definition, object by object (link_defined). */
struct link_find {
	const char *name;
	uintptr_t self; /* an address in this library: the walk ends at it */
	bool before;	/* an object before this library defines name */
};

/* The dynamic tables of an object: its symbols, their names, a hash table (GNU's or SysV's). */
struct link_dyn {
	const ElfW(Sym) * sym;
	const char *str;
	const uint32_t *gnu, *sysv;
};

static bool link_owns(const struct dl_phdr_info *info, uintptr_t a)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && a >= lo && a - lo < ph->p_memsz)
			return true;
	}
	return false;
}

static bool link_tables(const struct dl_phdr_info *info, struct link_dyn *d)
{
	const ElfW(Dyn) *dyn = NULL;

	*d = (struct link_dyn){0};
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
		uintptr_t p = dyn->d_un.d_ptr; /* glibc relocates them in place, but the vdso's */

		p += p < info->dlpi_addr ? info->dlpi_addr : 0;
		if (dyn->d_tag == DT_GNU_HASH)
			d->gnu = (const uint32_t *)p;
		else if (dyn->d_tag == DT_HASH)
			d->sysv = (const uint32_t *)p;
		else if (dyn->d_tag == DT_SYMTAB)
			d->sym = (const ElfW(Sym) *)p;
		else if (dyn->d_tag == DT_STRTAB)
			d->str = (const char *)p;
	}
	return d->sym && d->str && (d->gnu || d->sysv);
}

/* Is symbol i name, and a definition (not an undefined symbol: the canonical PLT entry of a
 * function whose address a non-PIE executable takes has a value, and no section)? */
static bool link_defines(const struct link_dyn *d, uint32_t i, const char *name)
{
	const ElfW(Sym) *s = &d->sym[i];

	return s->st_shndx != SHN_UNDEF && (s->st_value || s->st_shndx == SHN_ABS) &&
	       ELF64_ST_TYPE(s->st_info) != STT_TLS && !strcmp(d->str + s->st_name, name);
}

/* Does this object define name? By its GNU hash table (which holds its definitions only), or
 * its SysV one. */
static bool link_object_defines(const struct link_dyn *d, const char *name)
{
	uint32_t h = 5381, g;

	if (d->gnu) {
		const uint32_t *buckets, *chain;

		if (!d->gnu[0])
			return false;
		buckets =
		    d->gnu + 4 + d->gnu[2] * (sizeof(ElfW(Addr)) / 4); /* after the Bloom filter */
		chain = buckets + d->gnu[0];
		for (const char *c = name; *c; c++)
			h = h * 33 + (uint8_t)*c;
		for (uint32_t i = buckets[h % d->gnu[0]]; i && i >= d->gnu[1]; i++) {
			uint32_t c = chain[i - d->gnu[1]];

			if ((c | 1) == (h | 1) && link_defines(d, i, name))
				return true;
			if (c & 1)
				break;
		}
		return false;
	}
	if (!d->sysv[0])
		return false;
	h = 0;
	for (const char *c = name; *c; c++) {
		h = (h << 4) + (uint8_t)*c;
		g = h & 0xf0000000;
		h ^= g >> 24;
		h &= ~g;
	}
	for (uint32_t i = d->sysv[2 + h % d->sysv[0]]; i && i < d->sysv[1];
	     i = d->sysv[2 + d->sysv[0] + i])
		if (link_defines(d, i, name))
			return true;
	return false;
}

/* dl_iterate_phdr's callback: the objects in their lookup order, up to this library. */
static int link_visit(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct link_find *f = arg;
	struct link_dyn d;

	(void)size;
	if (link_owns(info, f->self))
		return 1;
	if (link_tables(info, &d) && link_object_defines(&d, f->name)) {
		f->before = true;
		return 1;
	}
	return 0;
}

/*
 * Does an object before this library in the lookup order define name? Then
 * the program's calls of name (bound to the first definition) miss us. The
 * objects in their load order, which is the lookup order of those loaded at
 * start. Not dlsym(RTLD_DEFAULT): it finds the canonical PLT entry that a
 * non-PIE executable taking the function's address has (Debian's python3),
 * an undefined symbol with a value, whose calls reach us through the GOT.
 */
static bool link_defined_before(const char *name)
{
	struct link_find f = {.name = name, .self = (uintptr_t)link_defined_before};

	dl_iterate_phdr(link_visit, &f);
	return f.before;
}

/*
 * Do the program's calls of malloc and free reach these wrappers? Not when
 * an object before us in the lookup order defines them (an executable linked
 * with a static allocator: jemalloc, tcmalloc, mimalloc built in), which the
 * loader binds every call to, nor when a tool redirects them at run time
 * (valgrind): the malloc the program's calls resolve to is called with a
 * size only these wrappers recognise. Not async-signal-safe.
 */
static bool link_interposed(void)
{
	static const char *const names[] = {"malloc", "free", "calloc", "realloc"};
	void *(*volatile bound)(size_t);

	/* The definitions first: the probe's size must never reach another allocator's malloc
	 * (one that aborts when it cannot satisfy a request, as xmalloc does, would end the
	 * program; a bump allocator would wrap its counter). */
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (link_defined_before(names[i]))
			return false;
	bound = (void *(*)(size_t))dlsym(RTLD_DEFAULT, "malloc");
	alloc__probe_seen(); /* cleared */
	return bound && !bound(ALLOC_PROBE_SIZE) && alloc__probe_seen();
}

/* The link (memory_link.h): libautoprof.so's slow paths kept, the controls handed back. */
AP_API const struct ap_memory_lib *__autoprof_memory_link_1(const struct ap_memory_core *core)
{
	static const struct ap_memory_lib controls = {.interposed = link_interposed,
						      .sampling = alloc__sampling};

	alloc__link(core);
	return &controls;
}

/*
 * At load: the real functions found before the program's first call (dlsym
 * may allocate: from the arena, now), and one line when libautoprof.so is
 * not loaded (its symbol absent): this library then only passes the calls
 * on. Said once per tree of processes: AUTOPROF_MEMORY_SAID, as
 * libautoprof.so's memory lines (memory_link.c), which the images a process
 * execs and its children inherit.
 */
__attribute__((constructor)) static void link_start(void)
{
	static const char msg[] = "autoprof: " AP_MEMORY_LIB_NAME " is preloaded without "
				  "libautoprof.so: allocations pass through, not profiled (name "
				  "both in LD_PRELOAD, libautoprof.so first)\n";
	const char *q = ap_env(AP_ENV_QUIET);
	ssize_t n;

	alloc__resolve();
	if (dlsym(RTLD_DEFAULT, AP_CORE_SYM))
		return;
	(void)dlerror(); /* the failed lookup's message is not the program's to read */
	if ((q && ap_env_word_on(q)) || ap_env(AP_ENV_MEMORY_SAID))
		return;
	setenv(ap_env_name(AP_ENV_MEMORY_SAID), "1", 1);
	n = write(STDERR_FILENO, msg, sizeof(msg) - 1);
	(void)n;
}
