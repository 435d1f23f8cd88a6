// SPDX-License-Identifier: MIT
/*
 * cli.c - autoprof-report's options: the table (the one source of --help and
 * the manual page) and the parser that fills struct cmdline.
 *
 * Adding an option: one row in cli_options[] (in the group where --help shows
 * it), one OPT_* value if it has no short letter, one case in cli__parse().
 */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>

#ifndef AUTOPROF_VERSION
#define AUTOPROF_VERSION "0.1"
#endif

enum {
	OPT_NO_CHILDREN = 256,
	OPT_FULL_NAMES,
	OPT_VERSION,
	OPT_LINES,
	OPT_TREE,
	OPT_CALLERS,
	OPT_MIN_PCT,
	OPT_PID,
	OPT_TID,
	OPT_COMM,
	OPT_DSO,
	OPT_TIME,
	OPT_CSV,
	OPT_FOLDED,
	OPT_FLAME,
	OPT_JSON,
	OPT_DIFF,
	OPT_LIST,
	OPT_MAN,
};

const char cli_synopsis[] = PROG " [OPTION...] [FILE...]\n" PROG " --diff BASELINE NEW";

const char cli_description[] =
    "Summarise one or more perf.data files (default ./perf.data) written by\n"
    "autoprof or perf record. Several files (a process tree) merge into one report.\n"
    "FILE may be a pipe-mode file (perf record -o -), or - for standard input.\n"
    "An output that is an input or an existing perf.data file is refused.";

const struct cli_option cli_options[] = {
    {NULL, 0, NULL, "Input:"},
    {"input", 'i', "FILE", "read FILE (as a FILE argument; may be repeated)"},
    {"event", 'e', "NAME",
     "the event the tree, folded, flame graph, CSV results\nand diff use (default: the first "
     "with samples)"},
    {"list", OPT_LIST, NULL,
     "list the profiles in the FILE or directory arguments\n(default .): pid, samples, lost, "
     "duration, command"},
    {NULL, 0, NULL, "Default view (header, counters, top functions by self and total time):"},
    {"top", 'n', "N", "show the top N rows (default 20)"},
    {"no-children", OPT_NO_CHILDREN, NULL, "omit the table of total (inclusive) time"},
    {"sort", 's', "KEYS",
     "group rows by a comma-separated list of up to 4 of:\nfunction (sym), library (dso), "
     "srcline (line),\nthread (tid), process (pid), comm"},
    {"lines", OPT_LINES, NULL, "add the source file:line of each function (libdw)"},
    {"full-names", OPT_FULL_NAMES, NULL, "C++ names with their parameter lists (perf report -v)"},
    {NULL, 0, NULL, "Call graph:"},
    {"tree", OPT_TREE, NULL, "callees under each of the top functions"},
    {"callers", OPT_CALLERS, NULL, "the same with callers (implies --tree)"},
    {"min-percent", OPT_MIN_PCT, "P", "hide tree branches under P% of the event (default 0.5)"},
    {NULL, 0, NULL, "Filters (lists are comma-separated):"},
    {"pid", OPT_PID, "LIST", "only these processes"},
    {"tid", OPT_TID, "LIST", "only these threads"},
    {"comm", OPT_COMM, "LIST", "only threads with these names"},
    {"dso", OPT_DSO, "LIST",
     "only samples whose function is in these objects\n(file names or paths; also --library)"},
    {"library", OPT_DSO, "LIST", NULL},
    {"time", OPT_TIME, "FROM,TO",
     "only samples FROM..TO seconds after the first sample\n(either may be empty)"},
    {NULL, 0, NULL, "Exports:"},
    {"csv", OPT_CSV, "DIR",
     "write stat.csv, overview.csv, processes.csv and\nresults.csv (readperf's tables) into DIR"},
    {"folded", OPT_FOLDED, NULL, "print collapsed stacks (FlameGraph's input format)"},
    {"flamegraph", OPT_FLAME, "FILE", "write an interactive SVG flame graph (- for stdout)"},
    {"json", OPT_JSON, NULL, "print the report as JSON"},
    {"diff", OPT_DIFF, NULL, "compare two profiles: which functions grew or shrank"},
    {NULL, 0, NULL, ""},
    {"help", 'h', NULL, "show this help"},
    {"version", OPT_VERSION, NULL, "show the version"},
    {"man", OPT_MAN, NULL, NULL}, /* the manual page, for the build */
};

const size_t cli_nr_options = ARRAY_SIZE(cli_options);

void cli__usage(FILE *out)
{
	const char *p;
	size_t i;

	fprintf(out, "usage: ");
	for (p = cli_synopsis; *p; p++)
		fprintf(out, *p == '\n' ? "\n       " : "%c", *p);
	fprintf(out, "\n\n%s\n\n", cli_description);
	for (i = 0; i < cli_nr_options; i++) {
		const struct cli_option *o = &cli_options[i];
		char flag[80];
		bool first = true;

		if (!o->name) {
			fprintf(out, "%s\n", o->help);
			continue;
		}
		if (!o->help)
			continue; /* an alias */
		snprintf(flag, sizeof(flag), "%c%c%s--%s%s%s", o->key < 256 ? '-' : ' ',
			 o->key < 256 ? o->key : ' ', o->key < 256 ? ", " : "  ", o->name,
			 o->arg ? " " : "", o->arg ? o->arg : "");
		if (strlen(flag) > 22)
			fprintf(out, "  %s\n", flag);
		for (p = o->help; *p; first = false) {
			size_t len = strcspn(p, "\n");

			fprintf(out, "  %-23s%.*s\n", first && strlen(flag) <= 22 ? flag : "",
				(int)len, p);
			p += len + (p[len] == '\n');
		}
	}
}

int cli__usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, PROG ": ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, " (try --help)\n");
	return 2;
}

static int parse_uint(const char *arg, unsigned long max, unsigned long *v)
{
	char *end;

	errno = 0;
	*v = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] == '-' || arg[0] == '+' || *v > max)
		return -EINVAL;
	return 0;
}

static int parse_ids(const char *arg, u32 *ids, size_t *nr)
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
		if (parse_uint(buf, UINT32_MAX, &v))
			return -EINVAL;
		ids[(*nr)++] = (u32)v;
		p += len;
		if (*p == ',' && !*++p)
			return -EINVAL;
	}
	return *nr ? 0 : -EINVAL;
}

static int parse_names(struct cmdline *c, const char *arg, const char **names, size_t *nr)
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

static int parse_time(const char *arg, struct filter *f)
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

static int add_input(struct cmdline *c, const char *path)
{
	if (c->nr_files == MAX_FILES)
		return cli__usage_error("more than %s files", "4096");
	c->files[c->nr_files++] = path;
	return 0;
}

/* Build getopt's tables from cli_options[]. */
static void build_getopt(struct option *lo, char *shorts)
{
	size_t i, n = 0;
	char *sp = shorts;

	*sp++ = ':';
	for (i = 0; i < cli_nr_options; i++) {
		const struct cli_option *o = &cli_options[i];

		if (!o->name)
			continue;
		lo[n++] = (struct option){o->name, o->arg ? required_argument : no_argument, NULL,
					  o->key};
		if (o->key < 256 && !strchr(shorts, o->key)) {
			*sp++ = (char)o->key;
			if (o->arg)
				*sp++ = ':';
		}
	}
	*sp = 0;
	lo[n] = (struct option){0};
}

int cli__parse(struct cmdline *c, int argc, char **argv)
{
	struct option longopts[ARRAY_SIZE(cli_options) + 1];
	char shorts[2 * ARRAY_SIZE(cli_options) + 2];
	struct filter *f = &c->so.filter;
	unsigned long v;
	char *end;
	int opt, views;

	c->ro = (struct report_opts){.top = 20, .children = true, .min_pct = 0.5};
	build_getopt(longopts, shorts);
	opterr = 0;
	while ((opt = getopt_long(argc, argv, shorts, longopts, NULL)) != -1) {
		switch (opt) {
		case 'i':
			if (add_input(c, optarg))
				return 2;
			break;
		case 'e':
			c->ro.event = optarg;
			break;
		case 'n':
			if (parse_uint(optarg, 1000000, &v) || !v)
				return cli__usage_error(
				    "--top needs a number from 1 to 1000000, not '%s'", optarg);
			c->ro.top = (unsigned)v;
			break;
		case OPT_NO_CHILDREN:
			c->ro.children = false;
			break;
		case 's':
			if (sort_spec__parse(&c->ro.sort, optarg))
				return cli__usage_error("bad --sort keys '%s'", optarg);
			break;
		case OPT_LINES:
			c->ro.lines = true;
			break;
		case OPT_FULL_NAMES:
			demangle__set_full(true);
			break;
		case OPT_CALLERS:
			c->ro.callers = true;
			/* fall through */
		case OPT_TREE:
			c->tree = true;
			break;
		case OPT_MIN_PCT:
			errno = 0;
			c->ro.min_pct = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(c->ro.min_pct >= 0) ||
			    c->ro.min_pct > 100)
				return cli__usage_error("--min-percent needs 0 to 100, not '%s'",
							optarg);
			break;
		case OPT_PID:
			if (parse_ids(optarg, f->pids, &f->nr_pids))
				return cli__usage_error("bad --pid list '%s'", optarg);
			break;
		case OPT_TID:
			if (parse_ids(optarg, f->tids, &f->nr_tids))
				return cli__usage_error("bad --tid list '%s'", optarg);
			break;
		case OPT_COMM:
			if (parse_names(c, optarg, f->comms, &f->nr_comms))
				return cli__usage_error("bad --comm list '%s'", optarg);
			break;
		case OPT_DSO:
			if (parse_names(c, optarg, f->dsos, &f->nr_dsos))
				return cli__usage_error("bad --dso list '%s'", optarg);
			break;
		case OPT_TIME:
			if (parse_time(optarg, f))
				return cli__usage_error("--time needs FROM,TO in seconds, not '%s'",
							optarg);
			break;
		case OPT_CSV:
			c->csv_dir = optarg;
			break;
		case OPT_FOLDED:
			c->folded = true;
			break;
		case OPT_FLAME:
			c->flame_file = optarg;
			break;
		case OPT_JSON:
			c->json = true;
			break;
		case OPT_DIFF:
			c->diff = true;
			break;
		case OPT_LIST:
			c->list = true;
			break;
		case OPT_MAN:
			cli__man(stdout);
			return 0;
		case 'h':
			cli__usage(stdout);
			return 0;
		case OPT_VERSION:
			printf(PROG " " AUTOPROF_VERSION "\n");
			return 0;
		case ':':
			return cli__usage_error("option '%s' needs an argument", argv[optind - 1]);
		default:
			return cli__usage_error("bad option '%s'", argv[optind - 1]);
		}
	}
	for (; optind < argc; optind++) {
		if (add_input(c, argv[optind]))
			return 2;
	}
	views = c->tree + c->folded + c->json + c->diff;
	if (views > 1)
		return cli__usage_error("%s",
					"--tree, --folded, --json and --diff exclude each other");
	if (c->diff && (c->nr_files != 2 || c->csv_dir || c->flame_file))
		return cli__usage_error("%s",
					"--diff compares exactly two files, and exports nothing");
	if (c->folded && c->flame_file && !strcmp(c->flame_file, "-"))
		return cli__usage_error("%s", "--folded and --flamegraph - both write to stdout");
	if (!c->nr_files)
		c->files[c->nr_files++] = c->list ? "." : "perf.data";
	c->so.lines = sort_spec__has(&c->ro.sort, SK_SRCLINE);
	return -1;
}

void cli__exit(struct cmdline *c)
{
	size_t i;

	for (i = 0; i < c->nr_lists; i++)
		free(c->lists[i]);
	c->nr_lists = 0;
}
