// SPDX-License-Identifier: MIT
/*
 * escape.c - strings from the file written safely into XML, JSON and CSV.
 * Names in a perf.data file are arbitrary bytes: control characters become
 * spaces and bytes that are not valid UTF-8 become U+FFFD, so every export
 * stays well-formed whatever the input.
 */
#include "view/view.h"

/* Length of the valid UTF-8 sequence at @p (1..4), or 0 if it is not one. */
static int utf8_len(const u8 *p)
{
	int n, i;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	}
	if ((n == 3 && p[0] == 0xe0 && p[1] < 0xa0) || (n == 3 && p[0] == 0xed && p[1] >= 0xa0) ||
	    (n == 4 && p[0] == 0xf0 && p[1] < 0x90) || (n == 4 && p[0] == 0xf4 && p[1] >= 0x90))
		return 0;
	return n;
}

/* Write @str through @special (which returns true if it wrote a char itself). */
static void put_text(FILE *out, const char *str, bool (*special)(FILE *, char))
{
	const u8 *p = (const u8 *)str;

	while (*p) {
		int n = utf8_len(p);

		if (!n) {
			fputs("\xef\xbf\xbd", out);
			p++;
		} else if (n > 1) {
			fwrite(p, 1, (size_t)n, out);
			p += n;
		} else {
			if (!special(out, (char)*p))
				fputc(*p < 0x20 || *p == 0x7f ? ' ' : *p, out);
			p++;
		}
	}
}

static bool xml_special(FILE *out, char c)
{
	switch (c) {
	case '&':
		fputs("&amp;", out);
		return true;
	case '<':
		fputs("&lt;", out);
		return true;
	case '>':
		fputs("&gt;", out);
		return true;
	case '"':
		fputs("&quot;", out);
		return true;
	case '\'':
		fputs("&apos;", out);
		return true;
	default:
		return false;
	}
}

static bool json_special(FILE *out, char c)
{
	if (c == '"' || c == '\\') {
		fputc('\\', out);
		fputc(c, out);
		return true;
	}
	return false;
}

static bool csv_special(FILE *out, char c)
{
	if (c == '"') {
		fputs("\"\"", out);
		return true;
	}
	return false;
}

/* @str as XML character data or attribute value (no quotes added). */
void escape__xml(FILE *out, const char *str)
{
	put_text(out, str, xml_special);
}

/* @str as a JSON string, quotes included. */
void escape__json(FILE *out, const char *str)
{
	fputc('"', out);
	put_text(out, str, json_special);
	fputc('"', out);
}

/* @str as one CSV field: always quoted, quotes doubled. */
void escape__csv(FILE *out, const char *str)
{
	fputc('"', out);
	put_text(out, str, csv_special);
	fputc('"', out);
}
