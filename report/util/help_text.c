/* SPDX-License-Identifier: MIT */
/*
 * help_text.c - --help's shared pieces (help_text.h): word wrapping at 80
 * columns and the manual-page pointer.
 */
#include "util/help_text.h"

#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void help_text__item(FILE *f, const char *lead, int indent, const char *text)
{
	int col = fprintf(f, "%s", lead);
	bool fresh = true; /* nothing of @text on this line yet */

	if (col >= indent) {
		fputc('\n', f);
		col = 0;
	}
	fprintf(f, "%*s", indent - col, "");
	col = indent;
	while (*text) {
		int word = (int)strcspn(text, " \n"), cut = 0;

		if (!word) {
			text++;
			continue;
		}
		if (!fresh && col + 1 + word > HELP_TEXT_WIDTH) {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
			fresh = true;
		}
		if (!fresh) {
			fputc(' ', f);
			col++;
		}
		/* a word wider than the column (a list such as a,b,c) breaks after a comma */
		for (int k = 1;
		     col + word > HELP_TEXT_WIDTH && k <= word && col + k <= HELP_TEXT_WIDTH; k++)
			if (text[k - 1] == ',')
				cut = k;
		if (cut) {
			fprintf(f, "%.*s\n%*s", cut, text, indent, "");
			text += cut;
			col = indent;
			fresh = true;
			continue;
		}
		fprintf(f, "%.*s", word, text);
		col += word;
		text += word;
		fresh = false;
	}
	fputc('\n', f);
}

/* Is @dir (a real path) one of the PATH's folders? */
static bool on_path(const char *dir)
{
	const char *path = getenv("PATH");
	char elem[PATH_MAX], real[PATH_MAX];

	while (path && *path) {
		size_t n = strcspn(path, ":");

		if (n && n < sizeof(elem)) {
			memcpy(elem, path, n);
			elem[n] = 0;
			if (realpath(elem, real) && !strcmp(real, dir))
				return true;
		}
		path += n + (path[n] == ':');
	}
	return false;
}

const char *help_text__man(const char *page, char *out, size_t cap)
{
	char self[PATH_MAX], dir[PATH_MAX], file[PATH_MAX + 64], real[PATH_MAX], cwd[PATH_MAX];
	const char *show = real;

	snprintf(out, cap, "man %s", page);
	if (!realpath("/proc/self/exe", self))
		return out;
	snprintf(dir, sizeof(dir), "%s", dirname(self));
	snprintf(file, sizeof(file), "%s/../share/man/man1/%s.1", dir, page);
	if (realpath(file, real)) {
		if (on_path(dir))
			return out; /* man-db looks in PATH's ../share/man */
	} else {
		snprintf(file, sizeof(file), "%s/man/%s.1", dir, page);
		if (!realpath(file, real))
			return out;
	}
	if (getcwd(cwd, sizeof(cwd)) && strcmp(cwd, "/")) {
		size_t n = strlen(cwd);

		if (!strncmp(real, cwd, n) && real[n] == '/')
			show = real + n + 1;
	}
	/* man reads a name with a '/' in it as a file */
	snprintf(out, cap, "man %s%s", strchr(show, '/') ? "" : "./", show);
	return out;
}
