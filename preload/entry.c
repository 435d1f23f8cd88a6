/* SPDX-License-Identifier: MIT */
/*
 * entry.c - the library's entry and exit: a thin constructor and destructor
 * over lifecycle__start()/lifecycle__stop() (session/lifecycle.c), kept apart so unit
 * tests can link everything else without profiling themselves.
 */
#include <errno.h>

#include "internal.h"

__attribute__((constructor)) static void autoprof_init(void)
{
	int saved = errno;

	lifecycle__start();
	errno = saved;
}

__attribute__((destructor)) static void autoprof_fini(void)
{
	int saved = errno;

	lifecycle__stop();
	errno = saved;
}
