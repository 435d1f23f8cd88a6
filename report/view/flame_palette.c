// SPDX-License-Identifier: MIT
/*
 * flame_palette.c - the colours of a flame graph, as FlameGraph's
 * flamegraph.pl --colors draws them: a hue per palette, varied by a hash of
 * the name so neighbours differ and the same function keeps its colour.
 * Whatever the palette, kernel frames are orange, JIT frames green, unknown
 * frames grey and process nodes lavender, so they stand out (and the
 * default palette draws user code red next to them, see render_flame.c); the
 * language palettes (java, js, perl) also tell C++ (yellow) and qualified
 * names (green) from the rest (red).
 */
#include "flame.h"

const char flame_palette_names[] =
    "hot, mem, io, wakeup, java, js, perl, red, green, blue, aqua, yellow, purple, orange";

bool flame_palette__valid(const char *name)
{
	size_t len = strlen(name);
	const char *p;

	if (!len || strchr(name, ','))
		return false;
	for (p = flame_palette_names; (p = strstr(p, name)); p += len) {
		if ((p == flame_palette_names || p[-1] == ' ') && (!p[len] || p[len] == ','))
			return true;
	}
	return false;
}

/* Three numbers in [0, 1) from the name: the first from its start, as flamegraph.pl --hash. */
static void hash3(const char *name, size_t len, double v[3])
{
	u64 h = strset__hash(name, len);
	double w = 1, max = 1, acc = 0;
	size_t i;

	for (i = 0; i < len && i < 16; i++) { /* the leading characters weigh most */
		acc += w * ((unsigned char)name[i] % 10) / 10.0;
		max += w;
		w *= 0.7;
	}
	v[0] = acc / max;
	v[1] = (double)(h & 0xffff) / 65536.0;
	v[2] = (double)((h >> 16) & 0xffff) / 65536.0;
}

static void rgb(char *buf, size_t len, double r, double g, double b)
{
	snprintf(buf, len, "rgb(%d,%d,%d)", (int)r, (int)g, (int)b);
}

/* One of flamegraph.pl's single-hue palettes; false if @hue is not one. */
static bool hue(const char *name, const double *v, char *buf, size_t len)
{
	double x = v[0];

	if (!strcmp(name, "red"))
		rgb(buf, len, 200 + 55 * x, 50 + 80 * x, 50 + 80 * x);
	else if (!strcmp(name, "green"))
		rgb(buf, len, 50 + 60 * x, 200 + 55 * x, 50 + 60 * x);
	else if (!strcmp(name, "blue"))
		rgb(buf, len, 80 + 60 * x, 80 + 60 * x, 205 + 50 * x);
	else if (!strcmp(name, "aqua"))
		rgb(buf, len, 50 + 60 * x, 165 + 55 * x, 165 + 55 * x);
	else if (!strcmp(name, "yellow"))
		rgb(buf, len, 175 + 55 * x, 175 + 55 * x, 50 + 20 * x);
	else if (!strcmp(name, "purple"))
		rgb(buf, len, 190 + 65 * x, 80 + 60 * x, 190 + 65 * x);
	else if (!strcmp(name, "orange"))
		rgb(buf, len, 190 + 65 * x, 90 + 65 * x, 0);
	else
		return false;
	return true;
}

/* The language palettes: C++ names (with "::") yellow, the rest red. */
static const char *language_hue(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i + 1 < len; i++) {
		if (name[i] == ':' && name[i + 1] == ':')
			return "yellow";
		if (name[i] == '.' || name[i] == '/')
			return "green"; /* java.lang.String.x, a/b.js:f, Perl::x's files */
	}
	return "red";
}

void flame_palette__colour(const char *palette, const char *name, size_t len, enum flame_kind kind,
			   char *buf, size_t buflen)
{
	double v[3];

	hash3(name, len, v);
	if (!palette)
		palette = "hot";
	switch (kind) {
	case FK_ROOT:
		rgb(buf, buflen, 220, 220, 220);
		return;
	case FK_PROC:
		rgb(buf, buflen, 190 + 30 * v[0], 170 + 30 * v[0], 230);
		return;
	case FK_UNKNOWN:
		rgb(buf, buflen, 170 + 30 * v[0], 170 + 30 * v[0], 170 + 30 * v[0]);
		return;
	case FK_KERNEL:
		hue("orange", v, buf, buflen);
		return;
	case FK_JIT:
		hue("green", v, buf, buflen);
		return;
	case FK_USER:
		break;
	}
	if (hue(palette, v, buf, buflen))
		return;
	if (!strcmp(palette, "java") || !strcmp(palette, "js") || !strcmp(palette, "perl"))
		hue(language_hue(name, len), v, buf, buflen);
	else if (!strcmp(palette, "mem"))
		rgb(buf, buflen, 0, 190 + 50 * v[1], 210 * v[0]);
	else if (!strcmp(palette, "io"))
		rgb(buf, buflen, 80 + 60 * v[0], 80 + 60 * v[0], 190 + 55 * v[1]);
	else if (!strcmp(palette, "wakeup"))
		rgb(buf, buflen, 0, 160 + 70 * v[0], 160 + 70 * v[0]);
	else /* hot */
		rgb(buf, buflen, 205 + 50 * v[0], 230 * v[1], 55 * v[2]);
}

void flame_palette__diff_colour(double delta, double max, char *buf, size_t buflen)
{
	double x = max > 0 ? (delta < 0 ? -delta : delta) / max : 0;
	int fade = 100 + (int)(130 * (1 - (x > 1 ? 1 : x))); /* never so dark the label is lost */

	if (delta > 0)
		snprintf(buf, buflen, "rgb(255,%d,%d)", fade, fade);
	else if (delta < 0)
		snprintf(buf, buflen, "rgb(%d,%d,255)", fade, fade);
	else
		snprintf(buf, buflen, "rgb(240,240,240)");
}
