/* SPDX-License-Identifier: MIT */
/*
 * unwind_lib.h - libunwind's functions as unwind_lib.c found them in the
 * copy it loaded on demand (unwind.c and offcpu.c call them through here).
 */
#ifndef AUTOPROF_HANDLER_UNWIND_LIB_H
#define AUTOPROF_HANDLER_UNWIND_LIB_H

#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <stdbool.h>

/* Filled once by unwind_lib__load(), never changed after: read only once it returned true
 * (unwind.c publishes that with unwind__ready()). */
struct unwind_lib {
	int (*getcontext)(unw_context_t *); /* NULL where the header makes it inline code */
	int (*init_local)(unw_cursor_t *, unw_context_t *);
	int (*init_local2)(unw_cursor_t *, unw_context_t *, int);
	int (*step)(unw_cursor_t *);
	int (*get_reg)(unw_cursor_t *, unw_regnum_t, unw_word_t *);
	int (*backtrace)(void **, int);
	void (*flush_cache)(unw_addr_space_t, unw_word_t, unw_word_t);
	unw_addr_space_t *local_as;
};

extern struct unwind_lib unwind_lib;

/* The calling function's context into uc, as unw_getcontext() takes it (a macro: the context
 * must be the caller's own frame, not a helper's that returned). */
#if defined(__x86_64__)
#define unwind_lib__getcontext(uc) unwind_lib.getcontext(uc)
#else
#define unwind_lib__getcontext(uc) unw_getcontext(uc)
#endif

/*
 * Load libunwind (RTLD_LOCAL: the program's lookups find none of its
 * symbols, as without us) and find its functions, once; true when they are
 * all there. Says why once on stderr when not. Not async-signal-safe: from
 * the program's context, outside any lock of ours.
 */
bool unwind_lib__load(void);

#endif
