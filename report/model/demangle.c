// SPDX-License-Identifier: MIT
/*
 * demangle.c - C++ and Rust (legacy and v0) names through libiberty's
 * cplus_demangle, the demangler binutils and perf use.
 *
 * By default names are shown as perf report shows them: C++ without
 * parameter lists and qualifiers (DMGL_NO_OPTS), Rust legacy names without
 * their ::h<16 hex> hash. demangle__set_full(true) (--full-names) keeps
 * C++ parameter lists (DMGL_PARAMS | DMGL_ANSI, perf report -v).
 */
#include "internal.h"

#include <libiberty/demangle.h>
#include <stdlib.h>

static bool full_names;

/* Show C++ parameter lists (true) or not (false, the default) from now on. */
void demangle__set_full(bool full)
{
	full_names = full;
}

/*
 * A malloc'ed demangled form of @name, or NULL if it is not a C++ (_Z) or
 * Rust (_ZN..17h<hash>E, _R) name, or cannot be demangled.
 */
char *demangle__name(const char *name)
{
	int opts = full_names ? DMGL_PARAMS | DMGL_ANSI : DMGL_NO_OPTS;

	if (name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return NULL;
	return cplus_demangle(name, opts | DMGL_AUTO);
}
