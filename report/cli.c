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
#include <limits.h>
#include <math.h>
#include <stdlib.h>

#include "util/help_text.h"

enum {
	OPT_NO_CHILDREN = 256,
	OPT_FULL_NAMES,
	OPT_NO_INLINE,
	OPT_DEBUG_DIR,
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
	OPT_LEAKS,
	OPT_FLAME,
	OPT_JSON,
	OPT_DIFF,
	OPT_PPROF,
	OPT_SPEEDSCOPE,
	OPT_FOCUS,
	OPT_PEEK,
	OPT_HIDE,
	OPT_IGNORE,
	OPT_NO_FOLD,
	OPT_HOT_LINES,
	OPT_BASELINE,
	OPT_RAW_COUNTS,
	OPT_TITLE,
	OPT_WIDTH,
	OPT_COLORS,
	OPT_ICICLE,
	OPT_MIN_WIDTH,
	OPT_PROC_ROOT,
	OPT_LIST,
	OPT_STRICT,
	OPT_MAN,
};

const char cli_synopsis[] =
    PROG " [OPTION...] [FILE...]\n" PROG " --diff [OPTION...] BASELINE NEW\n" PROG
	 " --diff [OPTION...] BASELINE... -- NEW...\n" PROG
	 " --baseline BASELINE [--baseline ...] [OPTION...] NEW...";

const char cli_description[] =
    "Summarise one or more perf.data files (default ./perf.data) written by\n"
    "autoprof or perf record. Several files (a process tree) merge into one report.\n"
    "FILE may be a pipe-mode file (perf record -o -), or - for standard input, or a\n"
    "directory: its perf.data files, in name order (a day of windows).\n"
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
    {"strict", OPT_STRICT, NULL,
     "exit with status 3 when any part of the input could not\nbe read or was skipped "
     "(the report still printed)"},
    {NULL, 0, NULL, "Default view (header, counters, top functions by self and total time):"},
    {"top", 'n', "N", "show the top N rows (default 20; 0 or all: every row,\nin every view)"},
    {"no-children", OPT_NO_CHILDREN, NULL, "omit the table of total (inclusive) time"},
    {"sort", 's', "KEYS",
     "group rows by a comma-separated list of up to 4 of:\nfunction (symbol, sym), library "
     "(dso), srcline (line),\nthread (tid), process (pid), comm, cpu"},
    {"lines", OPT_LINES, NULL,
     "add the source file:line where each function starts\n(libdw; --hot-lines: where its "
     "time went)"},
    {"hot-lines", OPT_HOT_LINES, "[N]",
     "after the self table, the N (default 5) source lines\nwith the most samples in each "
     "top function\n(perf annotate --print-line)"},
    {"full-names", OPT_FULL_NAMES, NULL,
     "C++ names whole: parameter lists, template arguments, std::basic_string<...> (perf report "
     "-v)"},
    {"no-inline", OPT_NO_INLINE, NULL,
     "no frames for inlined functions (libdw): each address\nis only the function its symbol "
     "names (perf report\n--no-inline)"},
    {"debug-dir", OPT_DEBUG_DIR, "DIR",
     "look for separate debug files under DIR too (its\n.build-id/xx/yyyy.debug and "
     "DIR/<object's dir>/\n<debuglink>) before /usr/lib/debug; repeatable"},
    {NULL, 0, NULL, "Call graph:"},
    {"tree", OPT_TREE, NULL, "callees under each of the top functions"},
    {"callers", OPT_CALLERS, NULL,
     "the callers of the top functions by self time, up to\nmain (perf report --no-children "
     "-G; implies --tree)"},
    {"min-percent", OPT_MIN_PCT, "P", "hide tree branches under P% of the event (default 0.5)"},
    {"no-fold-recursion", OPT_NO_FOLD, NULL,
     "keep direct recursion as a chain (default: one row,\n\"f (recursive xN)\")"},
    {NULL, 0, NULL,
     "Aiming (every view; REGEX is POSIX extended, matched in names;\n"
     "percentages stay of the whole profile):"},
    {"focus", OPT_FOCUS, "REGEX",
     "only stacks through a function matching REGEX; the\ntree and callers views start "
     "from the matches\n(pprof -focus)"},
    {"peek", OPT_PEEK, "REGEX",
     "the same, and the tree shows only the matches'\ndirect callers and callees "
     "(pprof -peek)"},
    {"hide", OPT_HIDE, "REGEX", "remove matching frames from every stack (pprof -hide)"},
    {"ignore", OPT_IGNORE, "REGEX", "drop the samples whose stack has a match (pprof -ignore)"},
    {"symbols", 'S', "LIST",
     "only these functions (exact names): the top table's\nrows, and stacks through them "
     "(perf report -S)"},
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
    {"leaks", OPT_LEAKS, NULL,
     "print the memory still allocated at the end (autoprof\n--memory), by allocation stack, "
     "biggest first"},
    {"flamegraph", OPT_FLAME, "FILE", "write an interactive SVG flame graph (- for stdout)"},
    {"json", OPT_JSON, NULL,
     "print the whole report as JSON: every function, the call\ntree, threads, processes, "
     "counters (doc/json-format.md)"},
    {"pprof", OPT_PPROF, "FILE",
     "write a gzipped pprof profile.proto (go tool pprof,\nPyroscope, Parca; - for stdout)"},
    {"speedscope", OPT_SPEEDSCOPE, "FILE",
     "write a speedscope JSON profile, one per thread\n(- for stdout)"},
    {"diff", OPT_DIFF, NULL,
     "compare two profiles: which functions grew or shrank;\nBASELINE NEW, or sets of files "
     "(process trees):\nBASELINE... -- NEW...; with --flamegraph, a differential\nflame graph"},
    {"baseline", OPT_BASELINE, "FILE",
     "a file of the baseline profile (may be repeated;\nimplies --diff, the FILE arguments "
     "are the new profile)"},
    {"raw-counts", OPT_RAW_COUNTS, NULL,
     "--diff compares sample counts, not shares of all samples"},
    {NULL, 0, NULL, "Flame graph (--flamegraph, also with --diff):"},
    {"title", OPT_TITLE, "TEXT", "the title (default Flame Graph, Icicle Graph, ...)"},
    {"width", OPT_WIDTH, "PX", "the image's width in pixels (default 1200)"},
    {"colors", OPT_COLORS, "PALETTE",
     "flamegraph.pl's palettes: hot (default), mem, io,\nwakeup, java, js, perl, red, green, "
     "blue, aqua,\nyellow, purple, orange; kernel frames are orange,\nJIT frames green in all "
     "(also --colours)"},
    {"colours", OPT_COLORS, "PALETTE", NULL},
    {"icicle", OPT_ICICLE, NULL, "an icicle graph: the root at the top, callees below"},
    {"min-width", OPT_MIN_WIDTH, "PX",
     "leave out frames narrower than PX pixels (default 0.1),\nor than a share: 0.5%"},
    {"process-root", OPT_PROC_ROOT, "HOW",
     "one node per command (comm) or process (pid) under\nall, or none; default: comm when "
     "the samples come\nfrom several processes"},
    {NULL, 0, NULL, ""},
    {"help", 'h', NULL, "show this help"},
    {"version", OPT_VERSION, NULL, "show the version"},
    {"man", OPT_MAN, NULL, NULL}, /* the manual page, for the build */
};

const size_t cli_nr_options = ARRAY_SIZE(cli_options);

void cli__usage(FILE *out)
{
	char man[PATH_MAX + 80];
	const char *p;
	size_t i;

	fprintf(out, "usage: ");
	for (p = cli_synopsis; *p; p++)
		fprintf(out, *p == '\n' ? "\n       " : "%c", *p);
	fprintf(out, "\n\n%s\n\n", cli_description);
	for (i = 0; i < cli_nr_options; i++) {
		const struct cli_option *o = &cli_options[i];
		char flag[80];

		if (!o->name) {
			fprintf(out, "%s\n", o->help);
			continue;
		}
		if (!o->help)
			continue; /* an alias */
		/* an optional argument "[N]" is written --name[=N] */
		snprintf(flag, sizeof(flag), "  %c%c%s--%s%s%s%s", o->key < 256 ? '-' : ' ',
			 o->key < 256 ? o->key : ' ', o->key < 256 ? ", " : "  ", o->name,
			 !o->arg	    ? ""
			 : o->arg[0] == '[' ? "[="
					    : " ",
			 o->arg ? o->arg + (o->arg[0] == '[') : "", "");
		help_text__item(out, flag, 25, o->help);
	}
	fprintf(out, "\nThe manual: %s\n", help_text__man(PROG, man, sizeof(man)));
}

int cli__usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, PROG ": ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, " (try --help)\n");
	return 2;
}

/* Put the --baseline files first and mark them as the baseline. Returns 0 or 2. */
static int split_baseline(struct cmdline *c, const char **base, size_t nr_base)
{
	if (array__reserve(&c->files, &c->cap_files, c->nr_files + nr_base, sizeof(*c->files)))
		return cli__usage_error("%s", "out of memory");
	memmove(c->files + nr_base, c->files, c->nr_files * sizeof(*c->files));
	memcpy(c->files, base, nr_base * sizeof(*base));
	c->nr_files += nr_base;
	c->nr_base = nr_base;
	return 0;
}

/*
 * Which inputs are the baseline of --diff: the --baseline files, else those
 * before "--" (@dashdash: the index of the first input after it, or
 * SIZE_MAX), else the first of exactly two. Returns 0 or 2 after a usage line.
 */
static int diff_sides(struct cmdline *c, const char **base, size_t nr_base, size_t dashdash)
{
	if (nr_base) {
		if (dashdash != SIZE_MAX && dashdash)
			return cli__usage_error(
			    "%s",
			    "--baseline FILE... and BASELINE... -- NEW... exclude each other");
		if (!c->nr_files)
			return cli__usage_error("%s", "--baseline needs the new profile's files");
		return split_baseline(c, base, nr_base);
	}
	if (dashdash != SIZE_MAX) {
		if (!dashdash || dashdash == c->nr_files)
			return cli__usage_error(
			    "%s", "--diff BASELINE... -- NEW... needs files on both sides");
		c->nr_base = dashdash;
		return 0;
	}
	if (c->nr_files != 2)
		return cli__usage_error("%s", "--diff compares two files (BASELINE NEW), or sets "
					      "of files: BASELINE... -- NEW...");
	c->nr_base = 1;
	return 0;
}

int cli__add_input(struct cmdline *c, const char *path)
{
	if (array__reserve(&c->files, &c->cap_files, c->nr_files + 1, sizeof(*c->files)))
		return cli__usage_error("%s", "out of memory");
	c->files[c->nr_files++] = path;
	return 0;
}

/* Build getopt's tables from cli_options[]. */
static void build_getopt(struct option *lo, char *shorts)
{
	size_t i, n = 0;
	char *sp = shorts;

	*sp++ = '-'; /* inputs in order, as option 1: "--" splits --diff's sides */
	*sp++ = ':';
	for (i = 0; i < cli_nr_options; i++) {
		const struct cli_option *o = &cli_options[i];

		if (!o->name)
			continue;
		lo[n++] = (struct option){o->name,
					  !o->arg	     ? no_argument
					  : o->arg[0] == '[' ? optional_argument
							     : required_argument,
					  NULL, o->key};
		*sp = 0; /* strchr reads what is written so far, never the array's garbage */
		if (o->key < 256 && !strchr(shorts, o->key)) {
			*sp++ = (char)o->key;
			if (o->arg)
				*sp++ = ':';
		}
	}
	*sp = 0;
	lo[n] = (struct option){0};
}

/* How many outputs write to stdout: a text view, or an export to "-". */
static int stdout_exports(const struct cmdline *c)
{
	const char *files[] = {c->flame_file, c->pprof_file, c->speedscope_file};
	int n = c->tree || c->folded || c->json || c->diff || c->leaks;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(files); i++)
		n += files[i] && !strcmp(files[i], "-");
	return n;
}

int cli__parse(struct cmdline *c, int argc, char **argv)
{
	struct option longopts[ARRAY_SIZE(cli_options) + 1];
	char shorts[2 * ARRAY_SIZE(cli_options) + 3];
	struct filter *f = &c->so.filter;
	size_t nr_base = 0, dashdash = SIZE_MAX;
	unsigned long v;
	char *end;
	int opt, views, last;

	c->ro = (struct report_opts){
	    .top = 20, .children = true, .min_pct = 0.5, .flame = {.min_width = 0.1}};
	build_getopt(longopts, shorts);
	opterr = 0;
	for (last = optind; (opt = getopt_long(argc, argv, shorts, longopts, NULL)) != -1;
	     last = optind) {
		switch (opt) {
		case 1:
		case 'i':
			if (cli__add_input(c, optarg))
				return 2;
			break;
		case 'e':
			c->ro.event = optarg;
			break;
		case 'n':
			if (!strcmp(optarg, "all")) {
				c->ro.top = UINT_MAX;
				break;
			}
			if (cli_args__uint(optarg, 1000000, &v))
				return cli__usage_error(
				    "--top needs a number from 0 to 1000000 or all, not '%s'",
				    optarg);
			c->ro.top = v ? (unsigned)v : UINT_MAX; /* 0: every row, as perf */
			break;
		case OPT_NO_CHILDREN:
			c->ro.children = false;
			break;
		case 's':
			if (rows__parse_spec(&c->ro.sort, optarg)) {
				char keys[256], msg[512];

				rows__valid_keys(keys, sizeof(keys));
				snprintf(msg, sizeof(msg),
					 "bad --sort keys '%.100s': up to 4 different keys of %s",
					 optarg, keys);
				return cli__usage_error("%s", msg);
			}
			break;
		case OPT_LINES:
			c->ro.lines = true;
			break;
		case OPT_FULL_NAMES:
			demangle__set_full(true);
			break;
		case OPT_NO_INLINE:
			resolver__set_inline(false);
			break;
		case OPT_DEBUG_DIR:
			if (!optarg[0] || elffile__add_debug_dir(optarg))
				return cli__usage_error("--debug-dir: %s",
							optarg[0] ? "at most 8 directories"
								  : "empty directory name");
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
			if (cli_args__ids(optarg, f->pids, &f->nr_pids))
				return cli__usage_error("bad --pid list '%s'", optarg);
			break;
		case OPT_TID:
			if (cli_args__ids(optarg, f->tids, &f->nr_tids))
				return cli__usage_error("bad --tid list '%s'", optarg);
			break;
		case OPT_COMM:
			if (cli_args__names(c, optarg, f->comms, &f->nr_comms))
				return cli__usage_error("bad --comm list '%s'", optarg);
			break;
		case OPT_DSO:
			if (cli_args__names(c, optarg, f->dsos, &f->nr_dsos))
				return cli__usage_error("bad --dso list '%s'", optarg);
			break;
		case OPT_TIME:
			if (cli_args__time(optarg, f))
				return cli__usage_error("--time needs FROM,TO in seconds, not '%s'",
							optarg);
			break;
		case OPT_FOCUS:
		case OPT_PEEK:
		case OPT_HIDE:
		case OPT_IGNORE: {
			char msg[256];

			if (aim__set(&c->aim, (enum aim_kind)(opt - OPT_FOCUS), optarg, msg,
				     sizeof(msg)))
				return cli__usage_error("bad regular expression: %s", msg);
			c->so.aim = c->ro.aim = &c->aim;
			break;
		}
		case 'S':
			if (cli_args__names(c, optarg, c->aim.symbols, &c->aim.nr_symbols))
				return cli__usage_error("bad --symbols list '%s'", optarg);
			c->so.aim = c->ro.aim = &c->aim;
			break;
		case OPT_NO_FOLD:
			c->ro.no_fold = true;
			break;
		case OPT_HOT_LINES:
			/* "--hot-lines 3" as well as "--hot-lines=3": a number is no file name */
			if (!optarg && optind < argc && argv[optind][0] &&
			    strspn(argv[optind], "0123456789") == strlen(argv[optind]))
				optarg = argv[optind++];
			if (optarg && (cli_args__uint(optarg, 1000, &v) || !v))
				return cli__usage_error(
				    "--hot-lines needs a number from 1 to 1000, not '%s'", optarg);
			c->ro.hot_lines = optarg ? (unsigned)v : 5;
			break;
		case OPT_CSV:
			c->csv_dir = optarg;
			break;
		case OPT_FOLDED:
			c->folded = true;
			break;
		case OPT_LEAKS:
			c->leaks = true;
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
		case OPT_PPROF:
			c->pprof_file = optarg;
			break;
		case OPT_SPEEDSCOPE:
			c->speedscope_file = optarg;
			break;
		case OPT_BASELINE:
			if (array__reserve(&c->baseline, &c->cap_baseline, nr_base + 1,
					   sizeof(*c->baseline)))
				return cli__usage_error("%s", "out of memory");
			c->baseline[nr_base++] = optarg;
			c->diff = true;
			break;
		case OPT_RAW_COUNTS:
			c->ro.flame.raw_counts = true;
			break;
		case OPT_TITLE:
			c->ro.flame.title = optarg;
			break;
		case OPT_WIDTH:
			if (cli_args__uint(optarg, 100000, &v) || v < 100)
				return cli__usage_error(
				    "--width needs 100 to 100000 pixels, not '%s'", optarg);
			c->ro.flame.width = (unsigned)v;
			break;
		case OPT_COLORS:
			if (!flame_palette__valid(optarg)) {
				fprintf(stderr,
					PROG ": unknown --colors '%s'; the palettes are: %s\n",
					optarg, flame_palette_names);
				return 2;
			}
			c->ro.flame.palette = optarg;
			break;
		case OPT_ICICLE:
			c->ro.flame.icicle = true;
			break;
		case OPT_MIN_WIDTH:
			if (cli_args__min_width(optarg, &c->ro.flame))
				return cli__usage_error(
				    "--min-width needs pixels (0.1) or a share (0.5%%), not '%s'",
				    optarg);
			break;
		case OPT_PROC_ROOT:
			if (cli_args__proc_root(optarg, &c->ro.flame.root))
				return cli__usage_error(
				    "--process-root needs auto, comm, pid or none, not '%s'",
				    optarg);
			break;
		case OPT_LIST:
			c->list = true;
			break;
		case OPT_STRICT:
			c->strict = true;
			break;
		case OPT_MAN:
			cli_man__print(stdout);
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
	if (optind == last + 1 && optind <= argc && !strcmp(argv[optind - 1], "--"))
		dashdash = c->nr_files; /* getopt stopped at "--" */
	for (; optind < argc; optind++) {
		if (cli__add_input(c, argv[optind]))
			return 2;
	}
	views = c->tree + c->folded + c->json + c->diff + c->leaks;
	if (views > 1)
		return cli__usage_error(
		    "%s", "--tree, --folded, --json, --leaks and --diff exclude each other");
	if (c->diff && c->csv_dir)
		return cli__usage_error("%s", "--diff exports no --csv");
	if (c->diff && diff_sides(c, c->baseline, nr_base, dashdash))
		return 2;
	if (c->folded && c->flame_file && !strcmp(c->flame_file, "-"))
		return cli__usage_error("%s", "--folded and --flamegraph - both write to stdout");
	if (stdout_exports(c) > 1)
		return cli__usage_error("%s",
					"only one of the views and exports can write to stdout");
	if (c->diff && (c->pprof_file || c->speedscope_file))
		return cli__usage_error("%s", "--diff exports nothing");
	if (!c->nr_files && cli__add_input(c, c->list ? "." : "perf.data"))
		return 2;
	c->so.lines =
	    rows__spec_has(&c->ro.sort, SK_SRCLINE) || c->ro.hot_lines || c->pprof_file || c->json;
	c->so.cpus = rows__spec_has(&c->ro.sort, SK_CPU);
	return -1;
}

void cli__exit(struct cmdline *c)
{
	size_t i;

	for (i = 0; i < c->nr_lists; i++)
		free(c->lists[i]);
	c->nr_lists = 0;
	aim__exit(&c->aim);
	free(c->files);
	free(c->baseline);
	c->files = c->baseline = NULL;
	c->nr_files = c->cap_files = c->cap_baseline = 0;
}
