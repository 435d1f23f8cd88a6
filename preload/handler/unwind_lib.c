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
 *
 * A load that comes late must still find the file: the program's first
 * thread usually brings it, and before a program shuts itself off from
 * the file system (chroot, pivot_root, Landlock: wrap/confine.c) the
 * library loads it first. A copy that fails is unloaded, said once.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>

#include "common.h"
#include "handler.h"
#include "objects.h"
#include "setup.h"
#include "unwind_lib.h"

/* Every libunwind 1.x is this file (the header's own version is checked here). */
#if UNW_VERSION_MAJOR != 1
#error "autoprof: libunwind 1.x expected (unwind_lib.c loads libunwind.so.8)"
#endif
#define SONAME "libunwind.so.8"

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

static bool loaded;	  /* atomic */
static int tried;	  /* load() ran; atomic */
static char failure[256]; /* why it failed (said by unwind_lib__load, outside any mask) */

/* Why the loaded copy cannot be used (NULL: it can): a symbol missing, or its code not marked
 * as the unwinder's in the objects table. */
static const char *unusable(void *h, struct unwind_lib *lib)
{
	const char *missing = find_all(h, lib);

	if (missing) {
		dlerror(); /* read: the program's dlerror() sees none of ours */
		return missing;
	}
	objects__refresh(false); /* its code entered as the unwinder's before any call into it */
	if (!(objects__kind((uintptr_t)lib->step) & AP_OBJ_UNWINDER))
		return "its code in the objects table";
	return NULL;
}

/*
 * The load, once (pthread_once). (A fork by another thread meanwhile
 * leaves the child the loader's list as any dlopen of the program's would,
 * and the child loads again.)
 */
static void load(void)
{
	struct unwind_lib lib;
	const char *why = NULL;
	void *h;

	memset(&lib, 0, sizeof(lib));
	h = dlopen(SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		why = dlerror(); /* read: the program's dlerror() sees none of ours */
		if (!why)
			why = SONAME " not loaded";
	} else if ((why = unusable(h, &lib)))
		dlclose(h); /* nothing of it stays mapped */
	else
		dlopen(SONAME, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE); /* and now it stays */
	if (why) {
		snprintf(failure, sizeof(failure), "%s", why);
	} else {
		unwind_lib = lib;
		__atomic_store_n(&loaded, true, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&tried, 1, __ATOMIC_RELEASE);
}

bool unwind_lib__load(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	static int said;
	uint64_t all = ~0ULL, old;
	int saved = errno; /* the loader's search leaves its own */

	if (!__atomic_load_n(&tried, __ATOMIC_ACQUIRE)) {
		/* every signal blocked over the once: a handler of the program that
		 * came back here (a failed exec, a thread made) would wait on it for good */
		raw_syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, &old, sizeof(old), 0, 0);
		pthread_once(&once, load);
		raw_syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, sizeof(old), 0, 0);
	}
	if (failure[0] && !__atomic_exchange_n(&said, 1, __ATOMIC_ACQ_REL))
		pr_warn("cannot use libunwind (%s): stacks it would walk keep their first frame",
			failure);
	errno = saved;
	return __atomic_load_n(&loaded, __ATOMIC_ACQUIRE);
}
