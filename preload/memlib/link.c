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

#include "../../common/stderr_fits.h"
#include "../dynsym.h"
#include "autoprof/env.h"
#include "memlib.h"

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
	struct dynsym_def d[8];
	int n = dynsym__all(name, d, 8);
	Dl_info self;

	if (!dladdr((void *)link_defined_before, &self))
		return false;
	for (int k = 0; k < n; k++)
		if (d[k].base == (uintptr_t)self.dli_fbase)
			return k > 0;
	return n > 0; /* this library's definition not among the first 8 */
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

/* memory_link.h's idle_take: the calling thread's bytes on idle_count, which starts again. */
static uint64_t idle_take(void)
{
	int64_t left = idle_count.left;

	idle_count.left = left > 0 ? INT64_MAX : 0;
	return left > 0 ? (uint64_t)(INT64_MAX - left) : (uint64_t)-left;
}

/* The link (memory_link.h): libautoprof.so's slow paths kept, the controls handed back. */
AP_API const struct ap_memory_lib *__autoprof_memory_link_1(const struct ap_memory_core *core)
{
	static const struct ap_memory_lib controls = {
	    .interposed = link_interposed, .sampling = alloc__sampling, .idle_take = idle_take};

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
	cxx__resolve();
	if (dlsym(RTLD_DEFAULT, AP_CORE_SYM))
		return;
	(void)dlerror(); /* the failed lookup's message is not the program's to read */
	if ((q && ap_env_word_on(q)) || ap_env(AP_ENV_MEMORY_SAID))
		return;
	setenv(ap_env_name(AP_ENV_MEMORY_SAID), "1", 1);
	if (stderr_fits(syscall, sizeof(msg) - 1)) /* never SIGXFSZ for our line */
		n = write(STDERR_FILENO, msg, sizeof(msg) - 1);
	(void)n;
}
