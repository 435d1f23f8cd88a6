// SPDX-License-Identifier: MIT
/*
 * demangle.c - C++ and Rust (legacy and v0) names through libiberty's
 * cplus_demangle, the demangler binutils and perf use.
 *
 * By default names are shown short: C++ without parameter lists and
 * qualifiers (DMGL_NO_OPTS, as perf report shows them), then shortened by
 * cxxname__shorten() (std::string for its spelled-out type, long template
 * argument lists as <...>); Rust legacy names without their ::h<16 hex>
 * hash. demangle__set_full(true) (--full-names) keeps C++ names whole, with
 * parameter lists (DMGL_PARAMS | DMGL_ANSI, perf report -v, c++filt).
 */
#include "model/model.h"

#include <ctype.h>
#include <libiberty/demangle.h>
#include <stdlib.h>

static bool full_names;

/* Show C++ names whole, with parameter lists (true) or short (false, the default) from now on. */
void demangle__set_full(bool full)
{
	full_names = full;
}

/* True when names are shown whole (--full-names): no column cuts them either. */
bool demangle__full(void)
{
	return full_names;
}

/* True if @name is a legacy Rust symbol: _ZN...17h<16 hex digits>E. */
static bool is_rust_legacy(const char *name)
{
	const char *h = name;
	int i;

	while ((h = strstr(h, "17h")) != NULL) {
		h += 3;
		for (i = 0; i < 16 && isxdigit((unsigned char)h[i]); i++)
			;
		if (i == 16 && h[16] == 'E')
			return true;
	}
	return false;
}

/*
 * A malloc'ed demangled form of @name, or NULL if it is not a C++ (_Z) or
 * Rust (_ZN..17h<hash>E, _R) name, or cannot be demangled.
 */
char *demangle__name(const char *name)
{
	int opts = full_names ? DMGL_PARAMS | DMGL_ANSI : DMGL_NO_OPTS;
	char *out;

	if (name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return NULL;
	out = cplus_demangle(name, opts | DMGL_AUTO);
	if (out && !full_names && name[1] == 'Z' && !is_rust_legacy(name))
		cxxname__shorten(out);
	return out;
}
