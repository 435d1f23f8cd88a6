/* SPDX-License-Identifier: MIT */
/*
 * memory_link.c - libautoprof.so's side of the link to libautoprof-memory.so
 * (memory_link.h): the allocator's wrappers live there, preloaded only for
 * memory profiles, so that a run without them leaves malloc and free bound
 * to the allocator's. Found with dlsym when AUTOPROF_MEMORY asks for them;
 * when missing, one line says which library to add to LD_PRELOAD, and the
 * file has no memory events (autoprof-report says so).
 */
#include <dlfcn.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memory.h"

/* What libautoprof-memory.so sees when it is loaded alone (memory_link.h): this one missing. */
__attribute__((visibility("default"))) int __autoprof_core_1(void)
{
	return 1;
}

static ap_memory_link_fn *link_fn; /* AP_MEMORY_LINK_SYM, once looked up */
static bool looked;
static const struct ap_memory_lib *lib; /* the controls, once linked */
static struct ap_memory_core core;
static char lib_path[PATH_MAX] AP_LARGE_BSS;

/* Look AP_MEMORY_LINK_SYM up (once): the library's link and its path. */
static ap_memory_link_fn *find_link(void)
{
	Dl_info info;

	if (looked)
		return link_fn;
	looked = true;
	link_fn = (ap_memory_link_fn *)dlsym(RTLD_DEFAULT, AP_MEMORY_LINK_SYM);
	if (!link_fn)
		(void)dlerror(); /* the failed lookup's message is not the program's to read */
	if (link_fn && dladdr((void *)link_fn, &info) && info.dli_fname)
		snprintf(lib_path, sizeof(lib_path), "%s", info.dli_fname);
	return link_fn;
}

const char *memory_link__path(void)
{
	find_link();
	return lib_path;
}

/* Where libautoprof-memory.so would be: beside this library. */
static void expected_path(char *out, size_t cap, char *self, size_t self_cap)
{
	Dl_info info;
	char dir[PATH_MAX];

	snprintf(self, self_cap, "libautoprof.so");
	snprintf(out, cap, "%s", AP_MEMORY_LIB_NAME);
	if (!dladdr((void *)expected_path, &info) || !info.dli_fname || !*info.dli_fname)
		return;
	snprintf(self, self_cap, "%s", info.dli_fname);
	snprintf(dir, sizeof(dir), "%s", info.dli_fname);
	snprintf(out, cap, "%s/%s", dirname(dir), AP_MEMORY_LIB_NAME);
}

bool memory_link__say_first(void)
{
	static bool said;

	if (said || ap_env(AP_ENV_MEMORY_SAID))
		return false;
	said = true;
	setenv(ap_env_name(AP_ENV_MEMORY_SAID), "1", 1);
	return true;
}

/* Make the link when the library is there (once): the controls, or NULL. */
static const struct ap_memory_lib *link_once(void)
{
	if (!lib && find_link()) {
		core = (struct ap_memory_core){
		    .allocated = memory__allocated,
		    .take = memory__take,
		    .put_back = memory__put_back,
		    .filter_pin = live__filter_pin,
		    .mem_tpoff = (intptr_t)((char *)&ap_mem - (char *)__builtin_thread_pointer())};
		lib = link_fn(&core);
	}
	return lib;
}

uint64_t memory_link__idle_take(void)
{
	return link_once() ? lib->idle_take() : 0;
}

const struct ap_memory_lib *memory_link__find(void)
{
	char want[PATH_MAX], self[PATH_MAX];

	if (link_once())
		return lib;
	if (memory_link__say_first()) {
		expected_path(want, sizeof(want), self, sizeof(self));
		pr_warn(
		    "AUTOPROF_MEMORY: %s is not preloaded, so allocations are not profiled (CPU "
		    "profiling goes on): run with autoprof --memory, or LD_PRELOAD=\"%s %s\"",
		    AP_MEMORY_LIB_NAME, self, want);
	}
	return NULL;
}

const struct ap_memory_lib *memory_link__lib(void)
{
	return lib;
}
