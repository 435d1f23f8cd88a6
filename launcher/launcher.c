/* SPDX-License-Identifier: MIT */
/*
 * launcher.c - `autoprof [options] [--] command [args...]`
 *
 * Turns perf-record-like flags into AUTOPROF_* variables (the one table in
 * include/autoprof/env.h), puts libautoprof.so in LD_PRELOAD, runs the
 * command as its child (launcher_run.c) and ends as the command ended: same
 * exit status, same signal. At the end it says which files were written.
 *
 * Two programs run this main (launcher__main()): autoprof (main.c) and
 * autoprof-outside (outside_main.c). The modes that profile from outside
 * (--outside, static and Go programs, -p/-t, `autoprof top`) link the
 * reader's model and libdw (and their libraries); autoprof leaves them out,
 * so that a run of the library's mode loads none of it, and execs
 * autoprof-outside in its place (same pid, same arguments, nothing said yet)
 * when the command line asks for one of them.
 */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../report/util/help_text.h"
#include "autoprof/env.h"
#include "common.h"
#include "launcher.h"
#include "onefile.h"

#define LIB_NAME     "libautoprof.so"
#define OUTSIDE_NAME "autoprof-outside"

static const struct launcher_row rows[] = {
#define ROW(id, who, lf, sf, arg, def, help)                                                       \
	{AUTOPROF_ENV_PREFIX #id, lf, arg, def, help, sf, AP_READ_##who},
    AUTOPROF_ENV_TABLE(ROW)
#undef ROW
};
#define NROWS (int)(sizeof(rows) / sizeof(rows[0]))

const struct launcher_row *launcher__rows(size_t *n)
{
	*n = NROWS;
	return rows;
}

/* The flags and variables as the library will read them (validate()): read once. */
static struct ap_config opts;

const struct ap_config *launcher__options(void)
{
	return &opts;
}

static void usage(FILE *f)
{
	static const char *const more[][2] = {
	    {"    --start-paused", "the same as --start 0"},
	    {"    --outside", "profile from outside the program (as perf record does), the mode of "
			      "static and Go programs (doc/outside.md)"},
	    {"  -p, --pid PID[,PID...]", "profile running processes (all their threads), from "
					 "outside"},
	    {"  -t, --tid TID[,TID...]", "profile running threads, from outside"},
	    {"    --duration SECONDS",
	     "with -p/-t: stop after this long (else Ctrl-C or their end)"},
	    {"  -h, --help", "this text"},
	    {"    --version", "the version"},
	};
	char man[PATH_MAX + 80];

	fprintf(f, "usage: autoprof [options] [--] command [args...]\n"
		   "       autoprof list [FILTER]   (the event names -e and --counters take)\n"
		   "       autoprof top [options] -p PID | [--] command   (a live view, as perf "
		   "top)\n"
		   "       autoprof merge -o OUT FILE [FILE...]   (per-process files into one)\n"
		   "Profile command (and nothing else) with libautoprof.so; write perf.data.\n\n"
		   "options (each sets the AUTOPROF_* variable shown; the variables work\n"
		   "without the launcher too):\n");
	for (int i = 0; i < NROWS; i++) {
		char flag[64], var[512];

		if (!rows[i].long_flag)
			continue;
		snprintf(flag, sizeof(flag), "  %s%c%s--%s%s%s", rows[i].short_flag ? "-" : "",
			 rows[i].short_flag ? rows[i].short_flag : ' ',
			 rows[i].short_flag ? ", " : "  ", rows[i].long_flag,
			 rows[i].arg ? " " : "", rows[i].arg ? rows[i].arg : "");
		snprintf(var, sizeof(var), "[%s%s%s]", rows[i].var,
			 *rows[i].def ? ", default " : "", rows[i].def);
		help_text__item(f, rows[i].short_flag ? flag : flag + 1, 29, rows[i].help);
		help_text__item(f, "", 29, var);
	}
	for (size_t i = 0; i < sizeof(more) / sizeof(more[0]); i++)
		help_text__item(f, more[i][0], 29, more[i][1]);
	fprintf(f, "\nvariables no flag sets:\n");
	for (int i = 0; i < NROWS; i++)
		if (!rows[i].long_flag && rows[i].who != AP_READ_REPORT) {
			char var[64];

			snprintf(var, sizeof(var), "  %s:", rows[i].var);
			help_text__item(f, var, 29, rows[i].help);
		}
	fprintf(f, "\nautoprof ctl [-t] PID start|stop|dump|status: control a profiled process\n"
		   "(-t: say how long it took to answer)\n");
	fprintf(f,
		"\n"
		"Read the result with: autoprof-report [FILE], perf report -i FILE, perf script\n"
		"-i FILE; the counter totals with perf stat report -i FILE.stat; which file\n"
		"holds which command with autoprof-report --list.\nThe manual: %s\n",
		help_text__man("autoprof", man, sizeof(man)));
}

/* Find @name: beside this binary (build/) or in ../lib/autoprof (installed). */
static int find_beside(const char *name, char *out, size_t cap)
{
	char self[PATH_MAX], *dir;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		return -1;
	self[n] = 0;
	dir = dirname(self);
	snprintf(out, cap, "%s/%s", dir, name);
	if (access(out, R_OK) == 0)
		return 0;
	snprintf(out, cap, "%s/../lib/autoprof/%s", dir, name);
	if (access(out, R_OK) == 0 && realpath(out, self)) {
		snprintf(out, cap, "%s", self);
		return 0;
	}
	fprintf(stderr, "autoprof: cannot find %s beside %s or in %s/../lib/autoprof\n", name, dir,
		dir);
	return -1;
}

/* Find libautoprof.so: AUTOPROF_LIB, else beside this binary or in ../lib/autoprof. */
static int find_lib(char *out, size_t cap)
{
	const char *env = ap_env(AP_ENV_LIB);

	if (env && *env) {
		if (access(env, R_OK) == 0 && realpath(env, out))
			return 0;
		fprintf(stderr, "autoprof: AUTOPROF_LIB='%s': %s\n", env, strerror(errno));
		return -1;
	}
	return find_beside(LIB_NAME, out, cap);
}

/*
 * --memory: the allocator's wrappers, libautoprof-memory.so, found beside
 * the library (lib: its path), appended to lib as "lib:memlib". Both go in
 * LD_PRELOAD: one loaded only as the other's dependency would come after
 * libc in the lookup order. Returns 0, or -1 after saying it is missing.
 */
static int memory_lib(char *lib, size_t cap)
{
	char dir[PATH_MAX], path[PATH_MAX];
	size_t n = strlen(lib);

	snprintf(dir, sizeof(dir), "%s", lib);
	snprintf(path, sizeof(path), "%s/libautoprof-memory.so", dirname(dir));
	if (access(path, R_OK)) {
		fprintf(stderr, "autoprof: --memory: cannot find %s (beside %s): %s\n", path, lib,
			strerror(errno));
		return -1;
	}
	if (snprintf(lib + n, cap - n, ":%s", path) >= (int)(cap - n))
		return -1;
	return 0;
}

/*
 * A mode that profiles from outside, in autoprof: become autoprof-outside
 * with the same arguments (@argv as main() had it), which runs it. Returns
 * only on failure (said): exit status 127.
 */
static int exec_outside(char **argv)
{
	char path[PATH_MAX];

	if (find_beside(OUTSIDE_NAME, path, sizeof(path)))
		return 127;
	launcher__restore_xfsz(); /* autoprof-outside saves it as it came */
	execv(path, argv);
	fprintf(stderr, "autoprof: cannot run %s: %s\n", path, strerror(errno));
	return 127;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * Open the counters with enable_on_exec, so they count from the command's
 * first instruction, and pass them on in AUTOPROF_COUNTER_FDS ("name:fd", or
 * "name:-" for one the machine lacks). A bad list is left for the library to
 * report.
 */
void launcher__open_counters(void)
{
	static struct ap_counters cs;
	char spec[1024];

	ap_quiet = true;
	if (counting__parse(&cs, opts.counters) || !cs.n)
		return;
	if (ap_env(AP_ENV_START) && !strcmp(ap_env(AP_ENV_START), "0")) {
		/* started paused: nothing counted until `autoprof ctl start` (the
		 * library enables them), not even from the exec on */
		cs.paused = true;
		counting__open(&cs, false);
		counting__keep_across_exec(&cs, true);
	} else {
		counting__open(&cs, true);
	}
	cs.start_ns = now_ns();
	if (counting__spec(&cs, cs.start_ns, spec, sizeof(spec)) == 0)
		setenv(ap_env_name(AP_ENV_COUNTER_FDS), spec, 1);
}

/*
 * Read every option with the library's own parser before anything runs (into
 * @cfg), so a bad flag is one line naming it and exit status 2 (as perf
 * record does), not a command run unprofiled. Returns 0 or 2 (said).
 */
static int validate(struct ap_config *cfg)
{
	char why[1024], dir[PATH_MAX], *slash;
	const struct launcher_row *row = NULL;
	bool quiet = ap_quiet;
	int bad;

	log__capture(why, sizeof(why));
	bad = options__parse(cfg);
	log__capture(NULL, 0);
	ap_quiet = quiet;
	if (bad) {
		char *cut = strstr(why, "; not profiling");

		if (cut)
			*cut = 0;
		for (int i = 0; i < NROWS && !row; i++) {
			size_t n = strlen(rows[i].var);

			if (rows[i].long_flag && !strncmp(why, rows[i].var, n) &&
			    (why[n] == '=' || why[n] == ' ' || why[n] == ':'))
				row = &rows[i];
		}
		if (row && row->short_flag)
			fprintf(stderr, "autoprof: -%c/--%s: %s\n", row->short_flag, row->long_flag,
				why);
		else if (row)
			fprintf(stderr, "autoprof: --%s: %s\n", row->long_flag, why);
		else
			fprintf(stderr, "autoprof: %s\n", why);
		return 2;
	}
	/* The output's folder must take a new file (the library makes it later). */
	snprintf(dir, sizeof(dir), "%s", cfg->output);
	slash = strrchr(dir, '/');
	if (slash)
		*(slash == dir ? slash + 1 : slash) = 0;
	else
		strcpy(dir, ".");
	if (access(dir, W_OK | X_OK)) {
		fprintf(stderr, "autoprof: -o/--output %s: cannot create a file there (%s)\n",
			cfg->output, strerror(errno));
		return 2;
	}
	return 0;
}

/* SIGXFSZ's disposition as the launcher got it (launcher__ignore_xfsz). */
static struct sigaction xfsz_as_given;
static bool xfsz_ignored;

/*
 * The launcher's own writes (the merged file, a window's, the counters',
 * the endpoints) under the user's RLIMIT_FSIZE fail with EFBIG, said where
 * they are made, instead of killing the launcher, and with it the status
 * the command's caller waits for.
 */
static void launcher__ignore_xfsz(void)
{
	struct sigaction ign;

	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	xfsz_ignored = sigaction(SIGXFSZ, &ign, &xfsz_as_given) == 0;
}

void launcher__restore_xfsz(void)
{
	if (xfsz_ignored)
		sigaction(SIGXFSZ, &xfsz_as_given, NULL);
}

int launcher__main(int argc, char **argv, const struct launcher_outside *out)
{
	struct option longopts[NROWS + 8];
	char shortopts[3 * NROWS + 8] = "+:hp:t:", freq[32], launcher_pid[24];
	static pid_t ids[4096];
	const char *id_list = NULL;
	double duration = 0;
	bool outside = false, threads = false, top_mode = false;
	char *end;
	char lib[PATH_MAX], *preload;
	const char *old, *output, *hook, *why = NULL, *kind;
	int c, i, n = 0, quiet;

	launcher__ignore_xfsz();

	if (argc > 1 && !strcmp(argv[1], "list"))
		return list_events__run(argc - 2, argv + 2);
	if (argc > 1 && !strcmp(argv[1], "merge"))
		return merge_cmd__run(argc - 1, argv + 1); /* `autoprof merge -o OUT FILE...` */
	if (argc > 1 && !strcmp(argv[1], "ctl"))
		return ctl__run(argc - 1, argv + 1); /* `autoprof ctl PID OP` */
	if (argc > 1 && !strcmp(argv[1], "top")) {   /* `autoprof top [options] -p PID | -- cmd` */
		if (!out)
			return exec_outside(argv);
		top_mode = true;
		argv[1] = argv[0];
		argc--;
		argv++;
	}
	for (i = 0; i < NROWS; i++) {
		if (!rows[i].long_flag)
			continue; /* set by the launcher itself */
		longopts[n++] =
		    (struct option){rows[i].long_flag,
				    rows[i].arg ? required_argument : no_argument, NULL, 256 + i};
		if (rows[i].short_flag) {
			size_t l = strlen(shortopts);

			shortopts[l] = (char)rows[i].short_flag;
			shortopts[l + 1] = rows[i].arg ? ':' : 0;
			shortopts[l + 2] = 0;
		}
	}
	longopts[n++] = (struct option){"help", no_argument, NULL, 'h'};
	longopts[n++] = (struct option){"man", no_argument, NULL, 'M'}; /* hidden: the manual */
	longopts[n++] = (struct option){"start-paused", no_argument, NULL, 'P'};
	longopts[n++] = (struct option){"outside", no_argument, NULL, 'O'};
	longopts[n++] = (struct option){"pid", required_argument, NULL, 'p'};
	longopts[n++] = (struct option){"tid", required_argument, NULL, 't'};
	longopts[n++] = (struct option){"duration", required_argument, NULL, 'D'};
	longopts[n++] = (struct option){"version", no_argument, NULL, 'V'};
	longopts[n] = (struct option){0};

	opterr = 0; /* a bad flag is one line of ours (perf_flags.c), not getopt's and the help */
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		const struct launcher_row *row = NULL;

		if (c == 'h') {
			usage(stdout);
			return 0;
		}
		if (c == 'V') {
			printf("autoprof " AUTOPROF_VERSION "\n");
			return 0;
		}
		if (c == '?' || c == ':')
			return perf_flags__bad(c, argv, longopts);
		if (c == 'M') {
			man__print(stdout);
			return 0;
		}
		if (c == 'P') { /* --start-paused: --start 0 */
			setenv(ap_env_name(AP_ENV_START), "0", 1);
			continue;
		}
		if (c == 'O') {
			outside = true;
			continue;
		}
		if (c == 'p' || c == 't') {
			if (id_list && threads != (c == 't')) {
				fprintf(stderr, "autoprof: -p and -t: give one or the other\n");
				return 2;
			}
			id_list = optarg;
			threads = c == 't';
			continue;
		}
		if (c == 'D') {
			duration = strtod(optarg, &end);
			if (end == optarg || *end || !(duration > 0) || duration > 1e9) {
				fprintf(stderr,
					"autoprof: --duration '%s': expected a number of seconds "
					"above 0\n",
					optarg);
				return 2;
			}
			continue;
		}
		if (c >= 256 && c < 256 + NROWS)
			row = &rows[c - 256];
		for (i = 0; !row && i < NROWS; i++)
			if (rows[i].short_flag == c)
				row = &rows[i];
		if (!row)
			return perf_flags__bad('?', argv, longopts);
		if (row == &rows[AP_ENV_CALLGRAPH]) { /* perf's -g dwarf, -g lbr, bare -g */
			int how = perf_flags__call_graph(
			    optarg, c == 'g' && optarg == argv[optind - 1], (const char **)&optarg);

			if (how == 2)
				return 2;
			if (how == 1) {
				optind--; /* perf's -g takes no value: the word is not its */
				continue;
			}
		}
		if (row == &rows[AP_ENV_FREQ])
			optarg = (char *)perf_flags__freq(optarg, freq, sizeof(freq)); /* -F max */
		setenv(row->var, row->arg ? optarg : "1", 1);
	}
	if (id_list && optind < argc) {
		fprintf(stderr, "autoprof: %s and a command: give one or the other\n",
			threads ? "-t" : "-p");
		return 2;
	}
	if (duration > 0 && !id_list) {
		fprintf(stderr, "autoprof: --duration goes with -p or -t (a command runs until it "
				"ends)\n");
		return 2;
	}
	if (optind >= argc && !id_list) {
		fprintf(stderr, "autoprof: no command to profile (see autoprof --help)\n");
		return 2;
	}

	if (validate(&opts))
		return 2;
	if (outside)
		why = "--outside";
	else if (top_mode || id_list)
		why = NULL; /* (their own modes) */
	else if ((kind = static_check__kind(argv[optind])) && !strcmp(kind, "static"))
		why = "statically linked: LD_PRELOAD cannot enter it";
	else if (kind)
		why = "a Go program: its runtime takes the signals and makes its threads with raw "
		      "clone";
	if ((id_list || why) && !out)
		return exec_outside(argv); /* (getopt's "+": @argv as it came) */
	output = opts.output;
	quiet = opts.quiet;
	perf_flags__say(quiet);
	{ /* a misspelt AUTOPROF_ name, said here once for the whole run */
		bool was_quiet = ap_quiet;

		ap_quiet = quiet;
		env_warn__say_unknown();
		ap_quiet = was_quiet;
		snprintf(launcher_pid, sizeof(launcher_pid), "%d", (int)getpid());
		setenv(ap_env_name(AP_ENV_LAUNCHER), launcher_pid, 1);
	}
	if (top_mode) {
		if (threads || (id_list && strchr(id_list, ','))) {
			fprintf(stderr, "autoprof: top watches one process: -p PID or a command\n");
			return 2;
		}
		if (id_list && out->parse_ids(id_list, ids, 1, "-p") < 0)
			return 2;
		return out->top(id_list ? NULL : argv + optind, id_list ? ids[0] : 0, output,
				ap_env(AP_ENV_OUTPUT) && *ap_env(AP_ENV_OUTPUT));
	}
	hook = ap_env(AP_ENV_ON_WINDOW);
	if (hook && *hook && !opts.window_ns) {
		fprintf(stderr,
			"autoprof: --on-window goes with --window (it runs for each window's "
			"file)\n");
		return 2;
	}
	if (hook && *hook && on_window__start(hook, output, quiet))
		return 2;
	if (id_list) {
		int nids = out->parse_ids(id_list, ids, (int)(sizeof(ids) / sizeof(ids[0])),
					  threads ? "-t" : "-p");

		if (nids < 0)
			return 2;
		nids = out->attach(ids, nids, threads, duration, output, quiet);
		on_window__finish(); /* the last windows' hooks */
		return nids;
	}
	if (why)
		return out->run(argv + optind, output, quiet, why);
	if (find_lib(lib, sizeof(lib)))
		return 127;
	if (opts.verbose && !quiet)
		fprintf(stderr,
			"autoprof: profiling %s with the library (a dynamic program: LD_PRELOAD "
			"enters it; --outside profiles from outside instead)\n",
			argv[optind]);
	if (opts.memory && memory_lib(lib, sizeof(lib))) /* lib:libautoprof-memory.so */
		return 127;
	old = getenv("LD_PRELOAD");
	if (old && *old) {
		if (asprintf(&preload, "%s:%s", lib, old) < 0)
			return 127;
	} else {
		preload = lib;
	}
	setenv("LD_PRELOAD", preload, 1);
	onefile__begin(output); /* the run's files into one at the end */
	onefile_windows__begin(output, argv + optind, quiet); /* --window: one file per window */
	onefile_windows__start();
	return launcher_run__command(argv + optind, output, quiet);
}
