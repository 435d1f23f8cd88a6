// SPDX-License-Identifier: MIT
/*
 * main.c - autoprof-report: the command line. The only file that prints
 * diagnostics or exits.
 *
 * Exit status: 0 report printed, 1 unreadable or malformed input,
 * 2 usage error.
 */
#include "internal.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>

#ifndef AUTOPROF_VERSION
#define AUTOPROF_VERSION "0.1"
#endif

#define PROG "autoprof-report"

static void usage(FILE *out)
{
	fprintf(out, "usage: " PROG " [--top N] [--no-children] [FILE...]\n"
		     "\n"
		     "Summarise one or more perf.data files (default ./perf.data) written by\n"
		     "autoprof or perf record. Several files are merged into one report.\n"
		     "\n"
		     "  -n, --top N        show the top N functions (default 20)\n"
		     "      --no-children  omit the table of total (inclusive) time\n"
		     "  -h, --help         show this help\n"
		     "      --version      show the version\n");
}

static int parse_top(const char *arg, unsigned *top)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] == '-' || v == 0 || v > 1000000)
		return -EINVAL;
	*top = (unsigned)v;
	return 0;
}

int main(int argc, char **argv)
{
	enum { OPT_NO_CHILDREN = 256, OPT_VERSION };
	static const struct option longopts[] = {
	    {"top", required_argument, NULL, 'n'},
	    {"no-children", no_argument, NULL, OPT_NO_CHILDREN},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, OPT_VERSION},
	    {NULL, 0, NULL, 0},
	};
	struct report_opts opts = {.top = 20, .children = true};
	static const char *const default_files[] = {"perf.data"};
	const char *const *files;
	struct session s;
	size_t i, nr_files;
	int c, err, status = 0;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "n:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (parse_top(optarg, &opts.top)) {
				fprintf(stderr, PROG ": --top needs a number from 1 to 1000000\n");
				return 2;
			}
			break;
		case OPT_NO_CHILDREN:
			opts.children = false;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case OPT_VERSION:
			printf(PROG " " AUTOPROF_VERSION "\n");
			return 0;
		default:
			fprintf(stderr, PROG ": bad option '%s' (try --help)\n", argv[optind - 1]);
			return 2;
		}
	}
	if (optind < argc) {
		files = (const char *const *)argv + optind;
		nr_files = (size_t)(argc - optind);
	} else {
		files = default_files;
		nr_files = 1;
	}

	if (session__init(&s)) {
		fprintf(stderr, PROG ": out of memory\n");
		return 1;
	}
	for (i = 0; i < nr_files; i++) {
		err = session__add_file(&s, files[i]);
		if (err) {
			fprintf(stderr, PROG ": %s\n", s.err);
			status = 1;
			goto out;
		}
	}
	err = session__process(&s);
	for (i = 0; i < s.nr_warnings; i++)
		fprintf(stderr, PROG ": warning: %s\n", s.warnings[i]);
	if (s.dropped_warnings)
		fprintf(stderr, PROG ": warning: %zu more warnings not shown\n",
			s.dropped_warnings);
	if (err) {
		fprintf(stderr, PROG ": %s\n", s.err);
		status = 1;
		goto out;
	}
	report__print(&s, &opts, stdout);
	if (fflush(stdout) != 0) {
		fprintf(stderr, PROG ": writing the report: %s\n", strerror(errno));
		status = 1;
	}
out:
	session__exit(&s);
	return status;
}
