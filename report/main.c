// SPDX-License-Identifier: MIT
/*
 * main.c - autoprof-report: checks the outputs the command line (cli.c)
 * asks for, reads the inputs and prints the view. With cli.c, the only file
 * that prints diagnostics or exits.
 *
 * Exit status: 0 report printed, 1 unreadable or malformed input (or an
 * output that could not be written), 2 usage error.
 */
#include "driver/session.h"
#include "view/view.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "autoprof/env.h"
#include "cli.h"

/* stat() of input @path ("-": standard input). Returns 0 or -1. */
static int stat_input(const char *path, struct stat *st)
{
	return strcmp(path, "-") ? stat(path, st) : fstat(STDIN_FILENO, st);
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
	if (S_ISREG(ost.st_mode) && perf_file__has_magic(out)) {
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
	if (c->pprof_file && strcmp(c->pprof_file, "-") &&
	    check_output(c, "the pprof profile", c->pprof_file))
		return 1;
	if (c->speedscope_file && strcmp(c->speedscope_file, "-") &&
	    check_output(c, "the speedscope profile", c->speedscope_file))
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

/* The inputs, a directory's profiles in place of the directory. */
struct inputs {
	char **v;     /* malloc'd paths */
	bool *listed; /* found in a directory, not named */
	size_t nr, cap, cap_listed;
};

/*
 * The inputs @files (@nr), a directory standing for its profiles (a day of
 * windows: `autoprof-report /var/tmp/svc/`) in name order, which is time
 * order for windows, into @in. Returns 0 or 1 after printing why.
 */
static int expand_inputs(const char *const *files, size_t nr, struct inputs *in)
{
	struct stat st;
	size_t i, was;
	bool dir;
	int err = 0;

	for (i = 0; i < nr && !err; i++) {
		was = in->nr;
		dir = strcmp(files[i], "-") && stat(files[i], &st) == 0 && S_ISDIR(st.st_mode);
		if (dir) {
			err = listing__dir(files[i], &in->v, &in->nr, &in->cap);
			if (err)
				fprintf(stderr, PROG ": %s: %s\n", files[i], strerror(-err));
			else if (in->nr == was)
				fprintf(stderr, PROG ": %s: no perf.data files in this directory\n",
					files[i]);
			err = err || in->nr == was;
		} else if (array__reserve(&in->v, &in->cap, in->nr + 1, sizeof(*in->v)) ||
			   !(in->v[in->nr] = strdup(files[i]))) {
			fprintf(stderr, PROG ": out of memory\n");
			err = 1;
		} else {
			in->nr++;
		}
		if (!err && array__reserve(&in->listed, &in->cap_listed, in->nr, 1)) {
			fprintf(stderr, PROG ": out of memory\n");
			err = 1;
		}
		while (!err && was < in->nr)
			in->listed[was++] = dir;
	}
	return err;
}

/*
 * True, after one line, if @n files are more than the kernel maps at once
 * for a process (vm.max_map_count, less room for the reader's own: each
 * input is mapped while the report is made); else mmap or malloc would fail
 * somewhere in the middle, said as "out of memory".
 */
static bool too_many(size_t n)
{
	unsigned long max = 0;
	FILE *f;

	if (n < 4096 || !(f = fopen("/proc/sys/vm/max_map_count", "re")))
		return false;
	if (fscanf(f, "%lu", &max) != 1)
		max = 0;
	fclose(f);
	if (!max || n + 2048 <= max)
		return false;
	fprintf(stderr,
		PROG ": %zu files: more than this kernel maps at once for a process "
		     "(vm.max_map_count %lu, less 2048 for the reader); read them in parts "
		     "(a day at a time), or raise vm.max_map_count\n",
		n, max);
	return true;
}

/* Open @nr files (or directories of them) into @s and read them. 0, or 1 after printing why. */
static int load(struct session *s, const struct session_opts *so, const char *const *files,
		size_t nr)
{
	struct inputs in = {0};
	size_t i;
	int err = session__init(s), e;

	if (err) {
		fprintf(stderr, PROG ": out of memory\n");
		return 1;
	}
	s->opts = *so;
	err = expand_inputs(files, nr, &in);
	if (!err && too_many(in.nr))
		err = 1;
	if (!err && session__reserve(s, in.nr)) {
		fprintf(stderr, PROG ": out of memory\n");
		err = 1;
	}
	for (i = 0; i < in.nr; i++) {
		e = err ? 0 : session__add_file(s, in.v[i]);
		/* a window removed since its folder was listed (--keep): said, not fatal */
		if (e == -ENOENT && in.listed[i])
			session__warn(s,
				      "%s: removed since its folder was listed (--keep "
				      "removes old windows): left out",
				      in.v[i]);
		else if (e) {
			fprintf(stderr, PROG ": %s\n", s->err);
			err = 1;
		}
		free(in.v[i]);
	}
	free(in.v);
	free(in.listed);
	if (err)
		return 1;
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

/* Write --flamegraph's file: @s's profile, or @base -> @s's differential graph. */
static int write_flamegraph(struct session *s, struct session *base, const struct cmdline *c)
{
	bool to_stdout = !strcmp(c->flame_file, "-");
	FILE *f = to_stdout ? stdout : fopen(c->flame_file, "we");
	int err;

	if (!f) {
		fprintf(stderr, PROG ": %s: %s\n", c->flame_file, strerror(errno));
		return 1;
	}
	err = base ? render_flame__diff(base, s, &c->ro, f) : render_flame(s, &c->ro, f);
	if (!to_stdout && (ferror(f) | (fclose(f) != 0)) && (!err || err == -ENODATA))
		err = -EIO;
	if (err == -ENODATA) { /* an empty profile is a report too (exit 0), said in one line */
		fprintf(stderr, PROG ": %s: the flame graph is empty: the profile has no samples\n",
			to_stdout ? "standard output" : c->flame_file);
		return 0;
	}
	if (err) {
		fprintf(stderr, PROG ": %s: %s\n", c->flame_file, strerror(-err));
		return 1;
	}
	return 0;
}

/*
 * Write an export into @path ("-": standard output) with @render. Returns 0,
 * or 1 after printing why.
 */
static int write_export(struct session *s, const struct cmdline *c, const char *path,
			int (*render)(struct session *, const struct report_opts *, FILE *))
{
	bool to_stdout = !strcmp(path, "-");
	FILE *f = to_stdout ? stdout : fopen(path, "we");
	int err;

	if (!f) {
		fprintf(stderr, PROG ": %s: %s\n", path, strerror(errno));
		return 1;
	}
	err = render(s, &c->ro, f);
	if (!to_stdout && (ferror(f) | (fclose(f) != 0)) && !err)
		err = -EIO;
	if (err) {
		fprintf(stderr, PROG ": %s: %s\n", path, strerror(-err));
		return 1;
	}
	return 0;
}

/*
 * An export of a profile without samples (of the chosen event) is written all
 * the same (a valid, empty file), and said in one line, as the flame graph's.
 */
static void say_empty_exports(const struct session *s, const struct cmdline *c)
{
	const char *outs[] = {c->pprof_file, c->speedscope_file, c->folded ? "-" : NULL};
	const char *names[] = {"an empty pprof profile", "an empty speedscope profile",
			       "no folded stacks"};
	int hist = session__main_hist(s, c->ro.event);

	if (hist >= 0 && (size_t)hist < s->hists.nr && s->hists.v[hist].nr_samples)
		return;
	for (size_t i = 0; i < sizeof(outs) / sizeof(outs[0]); i++)
		if (outs[i])
			fprintf(stderr, PROG ": %s: %s: the profile has no samples\n",
				strcmp(outs[i], "-") ? outs[i] : "standard output", names[i]);
}

/*
 * One file named (or ./perf.data): the run's first file of a bare LD_PRELOAD
 * run; its siblings FILE.PID[.N] of the same run are read too (run_files.c).
 * Returns 0 or 1 after printing why.
 */
static int add_run_files(struct cmdline *c, char ***run, size_t *nr_run)
{
	if (run_files__find(c->files[0], run, nr_run, stderr, PROG)) {
		fprintf(stderr, PROG ": out of memory\n");
		return 1;
	}
	for (size_t i = 0; i < *nr_run; i++)
		if (cli__add_input(c, (*run)[i]))
			return 1;
	return 0;
}

/*
 * --diff BASELINE NEW, one file each: each side's run siblings too, the
 * baseline's after the baseline. Returns 0 or 1 after printing why.
 */
static int add_diff_run_files(struct cmdline *c, char ***run, size_t *nr_run, char ***run2,
			      size_t *nr_run2)
{
	const char *base = c->files[0], *new = c->files[1];

	if (run_files__find(base, run, nr_run, stderr, PROG) ||
	    run_files__find(new, run2, nr_run2, stderr, PROG)) {
		fprintf(stderr, PROG ": out of memory\n");
		return 1;
	}
	c->nr_files = 0;
	if (cli__add_input(c, base))
		return 1;
	for (size_t i = 0; i < *nr_run; i++)
		if (cli__add_input(c, (*run)[i]))
			return 1;
	c->nr_base = c->nr_files;
	if (cli__add_input(c, new))
		return 1;
	for (size_t i = 0; i < *nr_run2; i++)
		if (cli__add_input(c, (*run2)[i]))
			return 1;
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
	if (c->flame_file && write_flamegraph(s, NULL, c))
		return 1;
	if (c->pprof_file && write_export(s, c, c->pprof_file, render_pprof))
		return 1;
	if (c->speedscope_file && write_export(s, c, c->speedscope_file, render_speedscope))
		return 1;
	if (c->tree)
		err = render_tree(s, &c->ro, stdout);
	else if (c->folded)
		err = render_folded(s, &c->ro, stdout);
	else if (c->leaks)
		err = render_leaks(s, &c->ro, stdout); /* 1: no memory profile, said */
	else if (c->json)
		err = render_json(s, &c->ro, stdout);
	else if (!c->csv_dir && !c->flame_file && !c->pprof_file && !c->speedscope_file)
		output__print(s, &c->ro, stdout);
	if (err) {
		if (err < 0)
			fprintf(stderr, PROG ": %s\n", strerror(-err));
		return 1;
	}
	say_empty_exports(s, c);
	return 0;
}

/* A misspelt AUTOPROF_REPORT_* variable would be ignored without a word: one line. */
static void say_unknown(const char *var, int len, const char *hint, void *arg)
{
	(void)arg;
	if (hint)
		fprintf(stderr, PROG ": unknown variable %.*s; did you mean %s%s?\n", len, var,
			AUTOPROF_ENV_PREFIX, hint);
	else
		fprintf(stderr, PROG ": unknown variable %.*s (doc/variables.md lists them)\n", len,
			var);
}

int main(int argc, char **argv)
{
	static struct cmdline c;
	struct csv_overview ov = {0};
	struct session a, b;
	char **run_paths = NULL, **run_paths2 = NULL;
	size_t nr_run = 0, nr_run2 = 0;
	int status;

	env_check__each_unknown(true, say_unknown, NULL);
	status = cli__parse(&c, argc, argv);
	if (status >= 0)
		goto out_lists;
	if (c.list) {
		status = listing__print(c.files, c.nr_files, stdout, c.strict);
		if (status && c.strict)
			status = 3;
		goto out_lists;
	}
	status = check_outputs(&c);
	if (status)
		goto out_lists;
	if (c.diff) {
		if (c.nr_base == 1 && c.nr_files == 2 &&
		    add_diff_run_files(&c, &run_paths, &nr_run, &run_paths2, &nr_run2)) {
			status = 1;
			goto out_lists;
		}
		status = load(&a, &c.so, c.files, c.nr_base);
		if (!status) {
			status = load(&b, &c.so, c.files + c.nr_base, c.nr_files - c.nr_base);
			if (!status && c.flame_file && c.ro.event &&
			    session__main_hist(&b, c.ro.event) < 0) {
				fprintf(stderr, PROG ": no event '%s' in the new profile\n",
					c.ro.event);
				status = 1;
			} else if (!status && c.flame_file)
				status = write_flamegraph(&b, &a, &c);
			else if (!status && render_diff(&a, &b, &c.ro, stdout)) {
				fprintf(stderr, PROG ": out of memory\n");
				status = 1;
			}
			session__exit(&b);
		}
	} else {
		if (c.nr_files == 1 && add_run_files(&c, &run_paths, &nr_run)) {
			status = 1;
			goto out_lists;
		}
		if (c.csv_dir)
			render_csv__overview_attach(&c.so, &ov);
		status = load(&a, &c.so, c.files, c.nr_files);
		if (!status)
			status = run(&a, &c);
		if (!status && c.strict && session__incomplete(&a))
			status = 3;
	}
	session__exit(&a);
	render_csv__overview_exit(&ov);
	if (fflush(stdout) != 0 && !status) {
		fprintf(stderr, PROG ": writing the report: %s\n", strerror(errno));
		status = 1;
	}
out_lists:
	run_files__free(run_paths, nr_run);
	run_files__free(run_paths2, nr_run2);
	cli__exit(&c);
	return status;
}
