// SPDX-License-Identifier: MIT
/*
 * demangle.c - C++ names through libstdc++'s __cxa_demangle, looked up once
 * with dlopen so the report does not link against libstdc++. Without it,
 * names stay mangled.
 */
#include "internal.h"

#include <dlfcn.h>
#include <stdlib.h>

typedef char *(*cxa_demangle_fn)(const char *name, char *buf, size_t *len, int *status);

static cxa_demangle_fn find_demangler(void)
{
	static bool tried;
	static cxa_demangle_fn fn;
	void *h;

	if (tried)
		return fn;
	tried = true;
	h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
	if (h)
		*(void **)&fn = dlsym(h, "__cxa_demangle");
	return fn;
}

/* A malloc'ed demangled form of @name, or NULL if it is not a C++ name (or cannot be). */
char *demangle__name(const char *name)
{
	cxa_demangle_fn fn;
	int status = -1;
	char *out;

	if (name[0] != '_' || name[1] != 'Z')
		return NULL;
	fn = find_demangler();
	if (!fn)
		return NULL;
	out = fn(name, NULL, NULL, &status);
	if (status != 0) {
		free(out);
		return NULL;
	}
	return out;
}
