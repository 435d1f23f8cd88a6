/* SPDX-License-Identifier: MIT */
/*
 * merge_cmd.c - `autoprof merge -o OUT FILE [FILE...]`: the files of a run
 * written one per process image (a bare LD_PRELOAD run, --per-process, a run
 * whose launcher was killed) merged into one perf.data, as the launcher
 * merges a run's files at its end (onefile_merge.c), for perf report, perf
 * script and hotspot, which read one file. FILE alone brings its run's
 * siblings FILE.PID and FILE.PID.N (found as autoprof-report finds them,
 * report/read/run_files.c). The inputs stay; OUT.stat is a copy of the first
 * input's FILE.stat. Built with -Ireport. Not async-signal-safe.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"
#include "launcher.h"
#include "onefile.h"
#include "read/read.h"

static int usage_error(const char *what)
{
	fprintf(stderr, "autoprof merge: %s (usage: autoprof merge -o OUT FILE [FILE...])\n", what);
	return 2;
}

/* Is @a the file @b (same device and inode)? */
static bool same_file(const char *a, const char *b)
{
	struct stat x, y;

	return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

/* Copy @from (if it exists) to @to through a temporary file and a rename. */
static void copy_stat(const char *from, const char *to)
{
	char tmp[PATH_MAX + 32], buf[65536];
	int in = open(from, O_RDONLY | O_CLOEXEC), out;
	ssize_t n;
	bool ok = true;

	if (in < 0)
		return;
	snprintf(tmp, sizeof(tmp), "%s.tmp-%d", to, (int)getpid());
	out = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	while (out >= 0 && ok && (n = read(in, buf, sizeof(buf))) > 0)
		ok = write(out, buf, (size_t)n) == n;
	close(in);
	if (out < 0 || close(out) < 0 || !ok || rename(tmp, to) < 0) {
		fprintf(stderr, "autoprof merge: cannot copy %s to %s: %s\n", from, to,
			strerror(errno));
		unlink(tmp);
	}
}

int merge_cmd__run(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"output", required_argument, NULL, 'o'}, {"help", no_argument, NULL, 'h'}, {0}};
	const char *out = NULL;
	char **run = NULL, tmp[PATH_MAX + 32], why[3 * PATH_MAX], from[PATH_MAX + 8],
	     to[PATH_MAX + 8];
	const char **paths;
	struct onefile_merged res;
	struct file_summary sum;
	size_t nr_run = 0, n = 0;
	int c, err;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:o:h", longopts, NULL)) != -1) {
		if (c == 'o')
			out = optarg;
		else if (c == 'h') {
			printf(
			    "usage: autoprof merge -o OUT FILE [FILE...]\n"
			    "Merge the files of a run written one per process image into OUT,\n"
			    "one perf.data for perf report, perf script and hotspot. FILE alone:\n"
			    "FILE and its run's FILE.PID and FILE.PID.N. The inputs stay.\n");
			return 0;
		} else {
			char what[256];

			snprintf(what, sizeof(what), "%s '%s'",
				 c == ':' ? "a value is missing after" : "unknown option",
				 argv[optind - 1]);
			return usage_error(what);
		}
	}
	if (!out)
		return usage_error("-o OUT names the merged file");
	if (optind >= argc)
		return usage_error("no file to merge");
	if (argc - optind == 1 &&
	    run_files__find(argv[optind], &run, &nr_run, stderr, "autoprof merge")) {
		fprintf(stderr, "autoprof merge: out of memory\n");
		return 1;
	}
	paths = calloc((size_t)(argc - optind) + nr_run, sizeof(*paths));
	if (!paths) {
		run_files__free(run, nr_run);
		return 1;
	}
	for (int i = optind; i < argc; i++)
		paths[n++] = argv[i];
	for (size_t i = 0; i < nr_run; i++)
		paths[n++] = run[i];
	for (size_t i = 0; i < n; i++)
		if (same_file(paths[i], out)) {
			fprintf(stderr, "autoprof merge: %s is an input; name another output\n",
				out);
			err = -EINVAL;
			goto out;
		}
	snprintf(tmp, sizeof(tmp), "%s.merging-%d", out, (int)getpid());
	err = onefile_merge__files(paths, n, tmp, NULL, &res, why, sizeof(why));
	if (err) {
		fprintf(stderr, "autoprof merge: %s\n", why);
		goto out;
	}
	err = old_file__move_aside(out);
	if (err || rename(tmp, out) < 0) {
		err = err ?: -errno;
		fprintf(stderr, "autoprof merge: %s: %s\n", out, strerror(-err));
		unlink(tmp);
		goto out;
	}
	snprintf(from, sizeof(from), "%s.stat", paths[0]);
	snprintf(to, sizeof(to), "%s.stat", out);
	copy_stat(from, to);
	file_summary__read(out, &sum);
	fprintf(stderr, "autoprof merge: wrote %s (%llu samples, %llu lost) from %zu files\n", out,
		(unsigned long long)sum.samples, (unsigned long long)sum.lost, n);
out:
	free(paths);
	run_files__free(run, nr_run);
	return err ? 1 : 0;
}
