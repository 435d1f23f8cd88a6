/* SPDX-License-Identifier: MIT */
/*
 * troff.h - the manual pages' writer, shared by autoprof(1) (launcher/man.c)
 * and autoprof-report(1) (report/cli_man.c): both pages are printed from the
 * programs' own option tables, so they cannot drift from --help.
 */
#ifndef AUTOPROF_TROFF_H
#define AUTOPROF_TROFF_H

#include <stdbool.h>
#include <stdio.h>

/* Write s as troff text: a control character at a line's start, backslashes,
 * dashes and commas (which man would break a line after) escaped. */
static inline void troff_put(FILE *f, const char *s)
{
	bool line_start = true;

	for (; *s; s++) {
		if (line_start && (*s == '.' || *s == '\''))
			fputs("\\&", f);
		line_start = *s == '\n';
		if (*s == '\\')
			fputs("\\e", f);
		else if (*s == '-')
			fputs("\\-", f);
		else if (*s == ',')
			fputs(",\\:", f);
		else
			fputc(*s, f);
	}
}

/* The .TP heading of one option: "-x, --long ARG" (short_flag 0: none). */
static inline void troff_option(FILE *f, int short_flag, const char *long_flag, const char *arg)
{
	fputs(".TP\n.BR ", f);
	if (short_flag)
		fprintf(f, "\\-%c \", \" ", short_flag);
	fputs("\\-\\-", f);
	troff_put(f, long_flag);
	if (arg) {
		fputs(" \" \\fI", f);
		troff_put(f, arg);
		fputs("\\fR\"", f);
	}
	fputc('\n', f);
}

#endif /* AUTOPROF_TROFF_H */
