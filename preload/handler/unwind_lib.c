/* SPDX-License-Identifier: MIT */
/*
 * unwind_lib.c - libunwind, loaded where a walk needs it.
 *
 * Linked in (DT_NEEDED), libunwind and the liblzma it brings cost every
 * process their mapping and relocation, 0.3-0.4 ms in the VMs we measure,
 * though a batched sampler walks its stack copies itself (cfi.c) and a
 * short single-threaded process never calls libunwind; and their symbols
 * joined the program's global scope, where its own lookups
 * (dlsym(RTLD_DEFAULT, "lzma_code"), a plugin's undefined unw_* symbols)
 * found ours. Loaded with dlopen(RTLD_LOCAL) as unwind.c sets libunwind up,
 * they cost only the processes that walk with it and stay out of the
 * program's scope; their calls into libc bind at once (RTLD_NOW), never in
 * a handler, and they stay (RTLD_NODELETE).
 *
 * Before anything calls into it, its code is entered in the objects table,
 * which marks it as the unwinder's (objects__kind): its pipe goes high
 * (fds.c), a sample whose pc is in it is not unwound.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

#include "common.h"
#include "objects.h"
#include "unwind_lib.h"

#ifndef AP_UNWIND_SONAME
#define AP_UNWIND_SONAME "libunwind.so.8" /* the Makefile names the one built against */
#endif

#define STR_(x) #x
#define STR(x)	STR_(x) /* a libunwind name after its header's renaming (_ULx86_64_step) */

struct unwind_lib unwind_lib;

/* Each wanted symbol, by the name the header gives the function, and its slot. */
static const struct {
	const char *name;
	size_t offset;
} symbols[] = {
#if defined(__x86_64__)
    {STR(unw_tdep_getcontext), offsetof(struct unwind_lib, getcontext)},
#endif
    {STR(unw_init_local), offsetof(struct unwind_lib, init_local)},
    {STR(unw_init_local2), offsetof(struct unwind_lib, init_local2)},
    {STR(unw_step), offsetof(struct unwind_lib, step)},
    {STR(unw_get_reg), offsetof(struct unwind_lib, get_reg)},
    {STR(unw_backtrace), offsetof(struct unwind_lib, backtrace)},
    {STR(unw_flush_cache), offsetof(struct unwind_lib, flush_cache)},
    {STR(unw_local_addr_space), offsetof(struct unwind_lib, local_as)},
};

/* Find every symbol in h into lib; the first missing one's name, or NULL. */
static const char *find_all(void *h, struct unwind_lib *lib)
{
	for (size_t i = 0; i < sizeof(symbols) / sizeof(symbols[0]); i++) {
		void *p = dlsym(h, symbols[i].name);

		if (!p)
			return symbols[i].name;
		memcpy((char *)lib + symbols[i].offset, &p, sizeof(p));
	}
	return NULL;
}

static bool loaded;

/* The load, once (pthread_once: a fork while it runs leaves the child free to run it). */
static void load(void)
{
	struct unwind_lib lib;
	const char *missing;
	void *h = dlopen(AP_UNWIND_SONAME, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);

	if (!h) {
		const char *why = dlerror(); /* read: the program's dlerror() sees none of ours */

		pr_warn("cannot load libunwind (%s): stacks it would walk keep their first frame",
			why ? why : AP_UNWIND_SONAME);
		return;
	}
	memset(&lib, 0, sizeof(lib));
	missing = find_all(h, &lib);
	if (missing)
		dlerror();
	/* its code marked as the unwinder's before any call into it */
	else if (!objects__lookup((uintptr_t)lib.step, NULL))
		missing = "its code in the loader's list";
	if (missing) {
		pr_warn("cannot use %s (%s not found): stacks it would walk keep their first frame",
			AP_UNWIND_SONAME, missing);
		return;
	}
	unwind_lib = lib;
	__atomic_store_n(&loaded, true, __ATOMIC_RELEASE);
}

bool unwind_lib__load(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, load);
	return __atomic_load_n(&loaded, __ATOMIC_ACQUIRE);
}
