/* SPDX-License-Identifier: MIT */
/*
 * help_text.h - what both programs' --help share (help_text.c): options
 * wrapped under a column, and a manual-page pointer that works from the
 * build tree and after make install. Self-contained: the launcher includes
 * it too.
 */
#ifndef AUTOPROF_HELP_TEXT_H
#define AUTOPROF_HELP_TEXT_H

#include <stddef.h>
#include <stdio.h>

#ifndef AUTOPROF_VERSION
#define AUTOPROF_VERSION "0.1"
#endif

/* --help's width: no line is longer. */
#define HELP_TEXT_WIDTH 80

/*
 * Print @lead (such as "  -o, --output FILE") padded to @indent columns, then
 * @text word-wrapped so that no line passes HELP_TEXT_WIDTH columns, each
 * further line indented by @indent ('\n' in @text is a space like any other).
 * A @lead too wide for its column goes on a line of its own.
 */
void help_text__item(FILE *f, const char *lead, int indent, const char *text);

/*
 * The command that opens manual page @page (autoprof, autoprof-report) from
 * here, into @out: "man PAGE" where man finds it by the PATH (installed and
 * on the PATH), else "man FILE" naming the page installed beside this program
 * (PREFIX/share/man/man1/PAGE.1) or built beside it (build/man/PAGE.1,
 * relative to the working folder when under it). Returns @out.
 */
const char *help_text__man(const char *page, char *out, size_t cap);

#endif
