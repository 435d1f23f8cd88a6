/* SPDX-License-Identifier: MIT */
/*
 * tap.h - a tiny TAP 13 producer for C unit tests, header only.
 *
 * plan(n); ok(cond, "what"); skip(n, "why"); diag("..."); return tap_done();
 * Debian 12's prove knows TAP 13 only, so that is the version we print.
 */
#ifndef AUTOPROF_TAP_H
#define AUTOPROF_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static int tap_count, tap_failed, tap_planned = -1;

static inline void plan(int n)
{
	printf("TAP version 13\n1..%d\n", n);
	tap_planned = n;
	fflush(stdout);
}

static inline __attribute__((format(printf, 2, 3))) int ok(int cond, const char *fmt, ...)
{
	va_list ap;

	tap_count++;
	if (!cond)
		tap_failed++;
	printf("%sok %d - ", cond ? "" : "not ", tap_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	return cond;
}

static inline __attribute__((format(printf, 1, 2))) void diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static inline void skip(int n, const char *why)
{
	while (n-- > 0)
		printf("ok %d # SKIP %s\n", ++tap_count, why);
	fflush(stdout);
}

/* Exit status for main(): failures, capped like Test::More, or 255 on a wrong count. */
static inline int tap_done(void)
{
	if (tap_planned >= 0 && tap_count != tap_planned) {
		printf("# planned %d tests but ran %d\n", tap_planned, tap_count);
		return 255;
	}
	return tap_failed > 254 ? 254 : tap_failed;
}

#endif /* AUTOPROF_TAP_H */
