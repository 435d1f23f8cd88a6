// SPDX-License-Identifier: MIT
/*
 * cli_args.c - the values of autoprof-report's options: numbers, id and
 * name lists, time ranges, flame graph widths and roots (cli.c calls them).
 */
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>

int cli_args__uint(const char *arg, unsigned long max, unsigned long *v)
{
	char *end;

	errno = 0;
	*v = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] == '-' || arg[0] == '+' || *v > max)
		return -EINVAL;
	return 0;
}

int cli_args__ids(const char *arg, u32 *ids, size_t *nr)
{
	char buf[32];
	const char *p = arg;

	*nr = 0;
	while (*p) {
		size_t len = strcspn(p, ",");
		unsigned long v;

		if (!len || len >= sizeof(buf) || *nr == MAX_FILTER)
			return -EINVAL;
		memcpy(buf, p, len);
		buf[len] = 0;
		if (cli_args__uint(buf, UINT32_MAX, &v))
			return -EINVAL;
		ids[(*nr)++] = (u32)v;
		p += len;
		if (*p == ',' && !*++p)
			return -EINVAL;
	}
	return *nr ? 0 : -EINVAL;
}

int cli_args__names(struct cmdline *c, const char *arg, const char **names, size_t *nr)
{
	char *copy, *p, *save = NULL;

	if (c->nr_lists == ARRAY_SIZE(c->lists))
		return -EINVAL;
	copy = strdup(arg);
	if (!copy)
		return -ENOMEM;
	c->lists[c->nr_lists++] = copy;
	*nr = 0;
	for (p = strtok_r(copy, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
		if (*nr == MAX_FILTER)
			return -EINVAL;
		names[(*nr)++] = p;
	}
	return *nr ? 0 : -EINVAL;
}

static int parse_secs(const char *s, size_t len, double *v)
{
	char buf[64], *end;

	if (len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = 0;
	errno = 0;
	*v = strtod(buf, &end);
	if (errno || end == buf || *end || !isfinite(*v) || *v < 0 || *v > 1e9)
		return -EINVAL;
	return 0;
}

int cli_args__time(const char *arg, struct filter *f)
{
	const char *comma = strchr(arg, ',');
	double from = 0, to = 1e9;

	if (!comma || (comma == arg && !comma[1]))
		return -EINVAL;
	if (comma > arg && parse_secs(arg, (size_t)(comma - arg), &from))
		return -EINVAL;
	if (comma[1] && parse_secs(comma + 1, strlen(comma + 1), &to))
		return -EINVAL;
	if (to <= from)
		return -EINVAL;
	f->has_time = true;
	f->time_from = (u64)(from * 1e9);
	f->time_to = (u64)(to * 1e9);
	return 0;
}

int cli_args__min_width(const char *arg, struct flame_opts *fo)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || !isfinite(v) || v < 0 || (*end && strcmp(end, "%")))
		return -EINVAL;
	if (*end) {
		if (v > 100)
			return -EINVAL;
		fo->min_pct = v;
		fo->min_width = 0;
	} else {
		if (v > 1e6)
			return -EINVAL;
		fo->min_width = v;
		fo->min_pct = 0;
	}
	return 0;
}

int cli_args__proc_root(const char *arg, int *root)
{
	static const char *const names[] = {"auto", "comm", "pid", "none"};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(names); i++) {
		if (!strcmp(arg, names[i])) {
			*root = (int)i; /* FLAME_ROOT_AUTO, _COMM, _PID, _NONE */
			return 0;
		}
	}
	return -EINVAL;
}
