/* SPDX-License-Identifier: MIT */
/*
 * env_check.c - AUTOPROF_* names in the environment that env.h's table does
 * not have: a misspelt variable (AUTOPROF_FREQUENCY=99) would otherwise be
 * ignored without a word, and the run go on at the default.
 *
 * The nearest name is suggested: the table's name or launcher flag written
 * as a variable (AUTOPROF_CALL_GRAPH, AUTOPROF_COUNT), one of them a prefix
 * of the other (FREQUENCY, FREQ), or a few letters apart. The library and the
 * launcher say every unknown name (env_warn.c); autoprof-report those meant
 * for it (AUTOPROF_REPORT_..., or nearest to one of its variables), which
 * nothing else would say. Only the C library here: the reader links it too.
 */
#include <string.h>
#include <strings.h>

#include "common.h"

extern char **environ;

/* The table's names (suffix after AUTOPROF_), flags and readers, row by row. */
#define ENV_CHECK_ROW(id, who, lf, sf, arg, def, help) {#id, lf, AP_READ_##who},
static const struct {
	const char *id, *flag;
	enum ap_env_who who;
} rows[] = {AUTOPROF_ENV_TABLE(ENV_CHECK_ROW)};
#undef ENV_CHECK_ROW
#define NROWS (sizeof(rows) / sizeof(rows[0]))

/* Edit distance (insert, delete, replace, swap of neighbours), case-blind, cut at 9. */
static unsigned distance(const char *a, size_t la, const char *b, size_t lb)
{
	unsigned d[32][32];

	if (la > 31 || lb > 31)
		return 9;
	for (size_t i = 0; i <= la; i++)
		d[i][0] = (unsigned)i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			unsigned cost = (a[i - 1] | 32) != (b[j - 1] | 32);
			unsigned v = d[i - 1][j - 1] + cost;

			if (d[i - 1][j] + 1 < v)
				v = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && (a[i - 1] | 32) == (b[j - 2] | 32) &&
			    (a[i - 2] | 32) == (b[j - 1] | 32) && d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	return d[la][lb] > 9 ? 9 : d[la][lb];
}

/* How far @name (the suffix, @len bytes) is from @cand (a name or a flag: '-' is '_'). */
static unsigned score(const char *name, size_t len, const char *cand)
{
	char c[32];
	size_t n = strlen(cand), shorter;

	if (n >= sizeof(c))
		return 9;
	for (size_t i = 0; i <= n; i++)
		c[i] = cand[i] == '-' ? '_' : cand[i];
	if (n == len && !strncasecmp(name, c, n))
		return 0;
	shorter = n < len ? n : len;
	if (shorter >= 3 && !strncasecmp(name, c, shorter))
		return 1; /* FREQUENCY and FREQ, CALLGRAPHS and CALLGRAPH */
	return distance(name, len, c, n) + 1;
}

/* The table's row nearest @name (@len bytes), or -1 when none is near enough. */
static int nearest(const char *name, size_t len)
{
	int best = -1;
	unsigned best_score = len <= 4 ? 2 : len <= 8 ? 3 : 4; /* at most 1, 2, 3 edits */

	for (size_t i = 0; i < NROWS; i++) {
		unsigned s = score(name, len, rows[i].id);

		if (rows[i].flag && score(name, len, rows[i].flag) < s)
			s = score(name, len, rows[i].flag);
		if (s < best_score) {
			best_score = s;
			best = (int)i;
		}
	}
	return best;
}

/*
 * Names of the project's own scripts, not of the programs (so not in the
 * table): AUTOPROF_FUZZ_TIME (tests/report-fuzz.t), AUTOPROF_FRESH
 * (scripts/fresh-root.sh). `AUTOPROF_FUZZ_TIME=60 make check` must not make
 * every profiled test program warn.
 */
static const char *const scripts_own[] = {"FUZZ_TIME", "FRESH"};

/* Is @name (the suffix, @len bytes) one of the table's, or of the scripts'? */
static bool known(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(scripts_own) / sizeof(scripts_own[0]); i++)
		if (strlen(scripts_own[i]) == len && !strncmp(scripts_own[i], name, len))
			return true;
	for (size_t i = 0; i < NROWS; i++)
		if (strlen(rows[i].id) == len && !strncmp(rows[i].id, name, len))
			return true;
	return false;
}

int env_check__each_unknown(bool report_only, env_check_say_fn say, void *arg)
{
	const size_t plen = strlen(AUTOPROF_ENV_PREFIX);
	int n = 0;

	for (char **e = environ; e && *e; e++) {
		const char *name = *e + plen, *eq = strchr(*e, '=');
		size_t len;
		int near;

		if (strncmp(*e, AUTOPROF_ENV_PREFIX, plen) || !eq || eq < name)
			continue;
		len = (size_t)(eq - name);
		if (known(name, len))
			continue;
		near = nearest(name, len);
		if (report_only && strncasecmp(name, "REPORT_", 7) &&
		    (near < 0 || rows[near].who != AP_READ_REPORT))
			continue;
		say(*e, (int)(eq - *e), near < 0 ? NULL : rows[near].id, arg);
		n++;
	}
	return n;
}
