// SPDX-License-Identifier: MIT
/*
 * main.c - autoprof-report: the command line. The only file that prints
 * diagnostics or exits.
 *
 * Exit status: 0 report printed, 1 unreadable or malformed input (or an
 * output that could not be written), 2 usage error.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef AUTOPROF_VERSION
#define AUTOPROF_VERSION "0.1"
#endif

#define PROG	  "autoprof-report"
#define MAX_FILES 4096

static void usage(FILE *out)
{
	fprintf(out,
		"usage: " PROG " [OPTION...] [FILE...]\n"
		"       " PROG " --diff BASELINE NEW\n"
		"\n"
		"Summarise one or more perf.data files (default ./perf.data) written by\n"
		"autoprof or perf record. Several files (a process tree) merge into one report.\n"
		"FILE may be a pipe-mode file (perf record -o -), or - for standard input.\n"
		"An output that is an input or an existing perf.data file is refused.\n"
		"\n"
		"Input:\n"
		"  -i, --input FILE       read FILE (as a FILE argument; may be repeated)\n"
		"  -e, --event NAME       the event the tree, folded, flame graph, CSV results\n"
		"                         and diff use (default: the first with samples)\n"
		"Default view (header, counters, top functions by self and total time):\n"
		"  -n, --top N            show the top N rows (default 20)\n"
		"      --no-children      omit the table of total (inclusive) time\n"
		"  -s, --sort KEYS        group rows by a comma-separated list of up to 4 of:\n"
		"                         function (sym), library (dso), srcline (line),\n"
		"                         thread (tid), process (pid), comm\n"
		"      --lines            add the source file:line of each function (libdw)\n"
		"      --full-names       C++ names with their parameter lists (perf report -v)\n"
		"Call graph:\n"
		"      --tree             callees under each of the top functions\n"
		"      --callers          the same with callers (implies --tree)\n"
		"      --min-percent P    hide tree branches under P%% of the event (default 0.5)\n"
		"Filters (lists are comma-separated):\n"
		"      --pid LIST         only these processes\n"
		"      --tid LIST         only these threads\n"
		"      --comm LIST        only threads with these names\n"
		"      --dso LIST         only samples whose function is in these objects\n"
		"                         (file names or paths; also --library)\n"
		"      --time FROM,TO     only samples FROM..TO seconds after the first sample\n"
		"                         (either may be empty)\n"
		"Exports:\n"
		"      --csv DIR          write stat.csv, overview.csv, processes.csv and\n"
		"                         results.csv (readperf's tables) into DIR\n"
		"      --folded           print collapsed stacks (FlameGraph's input format)\n"
		"      --flamegraph FILE  write an interactive SVG flame graph (- for stdout)\n"
		"      --json             print the report as JSON\n"
		"      --diff             compare two profiles: which functions grew or shrank\n"
		"\n"
		"  -h, --help             show this help\n"
		"      --version          show the version\n");
}

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
};

struct cmdline {
	struct report_opts ro;
	struct session_opts so;
	const char *files[MAX_FILES];
	size_t nr_files;
	const char *csv_dir, *flame_file;
	bool tree, folded, json, diff;
	char *lists[4]; /* copies of the comm and dso lists, split in place */
	size_t nr_lists;
};

static int usage_error(const char *fmt, const char *arg)
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
		return usage_error("more than %s files", "4096");
	c->files[c->nr_files++] = path;
	return 0;
}

/* Parse argv into @c. Returns -1 to go on, else the exit status. */
static int parse_args(struct cmdline *c, int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"input", required_argument, NULL, 'i'},
	    {"event", required_argument, NULL, 'e'},
	    {"top", required_argument, NULL, 'n'},
	    {"no-children", no_argument, NULL, OPT_NO_CHILDREN},
	    {"sort", required_argument, NULL, 's'},
	    {"lines", no_argument, NULL, OPT_LINES},
	    {"full-names", no_argument, NULL, OPT_FULL_NAMES},
	    {"tree", no_argument, NULL, OPT_TREE},
	    {"callers", no_argument, NULL, OPT_CALLERS},
	    {"min-percent", required_argument, NULL, OPT_MIN_PCT},
	    {"pid", required_argument, NULL, OPT_PID},
	    {"tid", required_argument, NULL, OPT_TID},
	    {"comm", required_argument, NULL, OPT_COMM},
	    {"dso", required_argument, NULL, OPT_DSO},
	    {"library", required_argument, NULL, OPT_DSO},
	    {"time", required_argument, NULL, OPT_TIME},
	    {"csv", required_argument, NULL, OPT_CSV},
	    {"folded", no_argument, NULL, OPT_FOLDED},
	    {"flamegraph", required_argument, NULL, OPT_FLAME},
	    {"json", no_argument, NULL, OPT_JSON},
	    {"diff", no_argument, NULL, OPT_DIFF},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, OPT_VERSION},
	    {NULL, 0, NULL, 0},
	};
	struct filter *f = &c->so.filter;
	unsigned long v;
	char *end;
	int opt, views;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":i:e:n:s:h", longopts, NULL)) != -1) {
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
				return usage_error(
				    "--top needs a number from 1 to 1000000, not '%s'", optarg);
			c->ro.top = (unsigned)v;
			break;
		case OPT_NO_CHILDREN:
			c->ro.children = false;
			break;
		case 's':
			if (sort_spec__parse(&c->ro.sort, optarg))
				return usage_error("bad --sort keys '%s'", optarg);
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
				return usage_error("--min-percent needs 0 to 100, not '%s'",
						   optarg);
			break;
		case OPT_PID:
			if (parse_ids(optarg, f->pids, &f->nr_pids))
				return usage_error("bad --pid list '%s'", optarg);
			break;
		case OPT_TID:
			if (parse_ids(optarg, f->tids, &f->nr_tids))
				return usage_error("bad --tid list '%s'", optarg);
			break;
		case OPT_COMM:
			if (parse_names(c, optarg, f->comms, &f->nr_comms))
				return usage_error("bad --comm list '%s'", optarg);
			break;
		case OPT_DSO:
			if (parse_names(c, optarg, f->dsos, &f->nr_dsos))
				return usage_error("bad --dso list '%s'", optarg);
			break;
		case OPT_TIME:
			if (parse_time(optarg, f))
				return usage_error("--time needs FROM,TO in seconds, not '%s'",
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
		case 'h':
			usage(stdout);
			return 0;
		case OPT_VERSION:
			printf(PROG " " AUTOPROF_VERSION "\n");
			return 0;
		case ':':
			return usage_error("option '%s' needs an argument", argv[optind - 1]);
		default:
			return usage_error("bad option '%s'", argv[optind - 1]);
		}
	}
	for (; optind < argc; optind++) {
		if (add_input(c, argv[optind]))
			return 2;
	}
	views = c->tree + c->folded + c->json + c->diff;
	if (views > 1)
		return usage_error("%s", "--tree, --folded, --json and --diff exclude each other");
	if (c->diff && (c->nr_files != 2 || c->csv_dir || c->flame_file))
		return usage_error("%s", "--diff compares exactly two files, and exports nothing");
	if (c->folded && c->flame_file && !strcmp(c->flame_file, "-"))
		return usage_error("%s", "--folded and --flamegraph - both write to stdout");
	if (!c->nr_files)
		c->files[c->nr_files++] = "perf.data";
	c->so.lines = sort_spec__has(&c->ro.sort, SK_SRCLINE);
	return -1;
}

/* stat() of input @path ("-": standard input). Returns 0 or -1. */
static int stat_input(const char *path, struct stat *st)
{
	return strcmp(path, "-") ? stat(path, st) : fstat(STDIN_FILENO, st);
}

/* True if the regular file @path starts with a perf.data magic (file or pipe mode). */
static bool looks_like_perf_data(const char *path)
{
	u64 magic = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	bool yes;

	if (fd < 0)
		return false;
	yes = read(fd, &magic, sizeof(magic)) == sizeof(magic) &&
	      (magic == PERF_FILE_MAGIC || magic == PERF_FILE_MAGIC_SWAPPED ||
	       magic == 0x454c494646524550ULL /* PERFFILE, version 1 */);
	close(fd);
	return yes;
}

/*
 * Refuse to write @out ("what" names the option) if it is one of the inputs
 * (the same file, by device and inode) or an existing perf.data file.
 * Returns 0, or 1 after printing one line.
 */
static int check_output(const struct cmdline *c, const char *what, const char *out)
{
	struct stat ost, ist;
	size_t i;

	if (stat(out, &ost) != 0)
		return 0; /* does not exist yet: nothing to lose */
	for (i = 0; i < c->nr_files; i++) {
		if (stat_input(c->files[i], &ist) == 0 && ist.st_dev == ost.st_dev &&
		    ist.st_ino == ost.st_ino) {
			fprintf(stderr,
				PROG ": refusing to write %s to %s: it is the input %s "
				     "(inputs are FILE arguments or -i FILE)\n",
				what, out, c->files[i]);
			return 1;
		}
	}
	if (S_ISREG(ost.st_mode) && looks_like_perf_data(out)) {
		fprintf(stderr, PROG ": refusing to overwrite %s with %s: it is a perf.data file\n",
			out, what);
		return 1;
	}
	return 0;
}

/*
 * Check every file the command line would write, before anything is read or
 * written: --flamegraph FILE, the four files of --csv DIR, and standard
 * output when it is redirected to (appended to) an input. Returns 0 or 1.
 */
static int check_outputs(const struct cmdline *c)
{
	static const char *const csv[] = {"stat.csv", "overview.csv", "processes.csv",
					  "results.csv"};
	struct stat st, ist;
	size_t i;

	if (c->flame_file && strcmp(c->flame_file, "-") &&
	    check_output(c, "the flame graph", c->flame_file))
		return 1;
	if (c->csv_dir) {
		if (stat(c->csv_dir, &st) == 0 && !S_ISDIR(st.st_mode)) {
			fprintf(stderr, PROG ": --csv %s: not a directory\n", c->csv_dir);
			return 1;
		}
		for (i = 0; i < ARRAY_SIZE(csv); i++) {
			char path[4096];

			if ((size_t)snprintf(path, sizeof(path), "%s/%s", c->csv_dir, csv[i]) >=
			    sizeof(path)) {
				fprintf(stderr, PROG ": --csv %s: path too long\n", c->csv_dir);
				return 1;
			}
			if (check_output(c, csv[i], path))
				return 1;
		}
	}
	if (fstat(STDOUT_FILENO, &st) == 0 && S_ISREG(st.st_mode)) {
		for (i = 0; i < c->nr_files; i++) {
			if (stat_input(c->files[i], &ist) == 0 && ist.st_dev == st.st_dev &&
			    ist.st_ino == st.st_ino) {
				fprintf(stderr,
					PROG ": refusing to write the report: standard output is "
					     "the input %s\n",
					c->files[i]);
				return 1;
			}
		}
	}
	return 0;
}

/* Open @nr files into @s and read them. Returns 0 or 1 after printing why. */
static int load(struct session *s, const struct session_opts *so, const char *const *files,
		size_t nr)
{
	size_t i;
	int err = session__init(s);

	if (err) {
		fprintf(stderr, PROG ": out of memory\n");
		return 1;
	}
	s->opts = *so;
	for (i = 0; i < nr; i++) {
		if (session__add_file(s, files[i])) {
			fprintf(stderr, PROG ": %s\n", s->err);
			return 1;
		}
	}
	err = session__process(s);
	for (i = 0; i < s->nr_warnings; i++)
		fprintf(stderr, PROG ": warning: %s\n", s->warnings[i]);
	if (s->dropped_warnings)
		fprintf(stderr, PROG ": warning: %zu more warnings not shown\n",
			s->dropped_warnings);
	if (err) {
		fprintf(stderr, PROG ": %s\n", s->err);
		return 1;
	}
	return 0;
}

static int write_flamegraph(struct session *s, const struct cmdline *c)
{
	bool to_stdout = !strcmp(c->flame_file, "-");
	FILE *f = to_stdout ? stdout : fopen(c->flame_file, "we");
	int err;

	if (!f) {
		fprintf(stderr, PROG ": %s: %s\n", c->flame_file, strerror(errno));
		return 1;
	}
	err = render_flamegraph(s, &c->ro, f);
	if (!to_stdout && (ferror(f) | (fclose(f) != 0)) && !err)
		err = -EIO;
	if (err) {
		fprintf(stderr, PROG ": %s: %s\n", c->flame_file, strerror(-err));
		return 1;
	}
	return 0;
}

/* Print the view the command line asked for. Returns the exit status. */
static int run(struct session *s, const struct cmdline *c)
{
	char msg[4200];
	int err = 0;

	if (c->ro.event && session__main_hist(s, c->ro.event) < 0) {
		fprintf(stderr, PROG ": no event '%s' in the input\n", c->ro.event);
		return 1;
	}
	if (c->csv_dir && render_csv(s, &c->ro, c->csv_dir, msg, sizeof(msg))) {
		fprintf(stderr, PROG ": %s\n", msg);
		return 1;
	}
	if (c->flame_file && write_flamegraph(s, c))
		return 1;
	if (c->tree)
		err = render_tree(s, &c->ro, stdout);
	else if (c->folded)
		err = render_folded(s, &c->ro, stdout);
	else if (c->json)
		err = render_json(s, &c->ro, stdout);
	else if (!c->csv_dir && !c->flame_file)
		report__print(s, &c->ro, stdout);
	if (err) {
		fprintf(stderr, PROG ": %s\n", strerror(-err));
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct cmdline c;
	struct csv_overview ov = {0};
	struct session a, b;
	size_t i;
	int status;

	c.ro = (struct report_opts){.top = 20, .children = true, .min_pct = 0.5};
	status = parse_args(&c, argc, argv);
	if (status >= 0)
		goto out_lists;
	status = check_outputs(&c);
	if (status)
		goto out_lists;
	if (c.diff) {
		status = load(&a, &c.so, c.files, 1);
		if (!status) {
			status = load(&b, &c.so, c.files + 1, 1);
			if (!status && render_diff(&a, &b, &c.ro, stdout)) {
				fprintf(stderr, PROG ": out of memory\n");
				status = 1;
			}
			session__exit(&b);
		}
	} else {
		if (c.csv_dir)
			csv_overview__attach(&c.so, &ov);
		status = load(&a, &c.so, c.files, c.nr_files);
		if (!status)
			status = run(&a, &c);
	}
	session__exit(&a);
	csv_overview__exit(&ov);
	if (fflush(stdout) != 0 && !status) {
		fprintf(stderr, PROG ": writing the report: %s\n", strerror(errno));
		status = 1;
	}
out_lists:
	for (i = 0; i < c.nr_lists; i++)
		free(c.lists[i]);
	return status;
}
