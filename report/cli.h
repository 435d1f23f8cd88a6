/* SPDX-License-Identifier: MIT */
/*
 * cli.h - autoprof-report's command line: one table of options (cli.c) that
 * drives getopt, --help and the manual page, and the parsed result.
 */
#ifndef AUTOPROF_REPORT_CLI_H
#define AUTOPROF_REPORT_CLI_H

#include "driver/session.h"
#include "view/view.h"

#define PROG "autoprof-report"

/* One row of the option table; a row without a name is a group heading. */
struct cli_option {
	const char *name; /* long name without "--"; NULL: heading */
	int key;	  /* short letter, or an OPT_* value */
	const char *arg;  /* the argument's name in the help; NULL: no argument */
	const char *help; /* lines separated by '\n'; NULL: an alias not shown */
};

extern const struct cli_option cli_options[];
extern const size_t cli_nr_options;
extern const char cli_synopsis[], cli_description[];

/* The parsed command line. */
struct cmdline {
	struct report_opts ro;
	struct session_opts so;
	const char **files; /* the inputs as named (a directory: its profiles, main.c) */
	size_t nr_files, cap_files;
	const char **baseline; /* --baseline FILE..., while parsing */
	size_t cap_baseline;
	size_t nr_base; /* --diff: files[0..nr_base) are the baseline, the rest the new profile */
	const char *csv_dir, *flame_file;
	const char *pprof_file, *speedscope_file; /* --pprof, --speedscope: "-" is stdout */
	bool tree, folded, json, diff;
	bool leaks;	/* --leaks: the memory still allocated at the end (render_leaks.c) */
	bool list;	/* --list: the profiles of the inputs (default .), no report */
	bool strict;	/* --strict: status 3 when the report is not of the whole input */
	char *lists[4]; /* copies of the comm, dso and symbol lists, split in place */
	struct aim aim; /* --focus, --peek, --hide, --ignore, -S */
	size_t nr_lists;
};

/*
 * Parse argv into @c (defaults first). Returns -1 to go on, else the exit
 * status (0 after --help or --version, 2 after printing one usage line).
 */
int cli__parse(struct cmdline *c, int argc, char **argv);
/* Add input @path to c->files (no limit). Returns 0, or 2 after one line (out of memory). */
int cli__add_input(struct cmdline *c, const char *path);
/* Free what cli__parse() allocated. */
void cli__exit(struct cmdline *c);
/* Print --help from the table. */
void cli__usage(FILE *out);
/* Print the manual page (troff) from the same table: the hidden --man. */
void cli_man__print(FILE *out);
/* Print one line "autoprof-report: <fmt with arg> (try --help)"; returns 2. */
int cli__usage_error(const char *fmt, const char *arg);

/* ---- cli_args.c: option values; each returns 0, or -EINVAL (-ENOMEM) ---- */

/* A decimal number in [0, @max]. */
int cli_args__uint(const char *arg, unsigned long max, unsigned long *v);
/* A comma-separated list of ids (at most MAX_FILTER) into @ids. */
int cli_args__ids(const char *arg, u32 *ids, size_t *nr);
/* A comma-separated list of names into @names, pointing into a copy @c keeps. */
int cli_args__names(struct cmdline *c, const char *arg, const char **names, size_t *nr);
/* --time FROM,TO (seconds after the first sample, either may be empty) into @f. */
int cli_args__time(const char *arg, struct filter *f);
/* --min-width: pixels, or a share ("0.5%"). */
int cli_args__min_width(const char *arg, struct flame_opts *fo);
/* --process-root comm|pid|none. */
int cli_args__proc_root(const char *arg, int *root);

#endif /* AUTOPROF_REPORT_CLI_H */
