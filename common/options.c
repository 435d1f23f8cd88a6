/* SPDX-License-Identifier: MIT */
/*
 * config.c - read every AUTOPROF_* variable once, strictly, into one struct.
 *
 * A bad value is reported in one line naming the variable and the value, and
 * makes config__parse() fail: the caller then leaves the program unprofiled.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "autoprof/env.h"
#include "common.h"

/* The value of AUTOPROF_<id>, or the table's default when unset or empty. */
#define ENV_DEFAULT(id, lf, sf, arg, def, help) [ENV_##id] = def,
#define ENV_ENUM(id, lf, sf, arg, def, help)	ENV_##id,
enum { AUTOPROF_ENV_TABLE(ENV_ENUM) ENV_COUNT };
static const char *const env_default[] = {AUTOPROF_ENV_TABLE(ENV_DEFAULT)};
#define ENV_NAME(id, lf, sf, arg, def, help) [ENV_##id] = AUTOPROF_ENV_PREFIX #id,
static const char *const env_name[] = {AUTOPROF_ENV_TABLE(ENV_NAME)};

static const char *env_get(int which, bool *set)
{
	const char *v = getenv(env_name[which]);

	*set = v && *v;
	return *set ? v : env_default[which];
}

/*
 * Parse a whole decimal number in [lo, hi] from AUTOPROF_<which>.
 * Returns 0, or -EINVAL after saying what is wrong.
 */
static int parse_u64(int which, uint64_t lo, uint64_t hi, uint64_t *out)
{
	bool set;
	const char *s = env_get(which, &set);
	char *end;
	unsigned long long v;

	if (!*s) {
		*out = 0;
		return 0;
	}
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*s == '-' || errno || end == s || *end || v < lo || v > hi) {
		pr_warn("%s='%s' is not a whole number from %llu to %llu; not profiling",
			env_name[which], s, (unsigned long long)lo, (unsigned long long)hi);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

/*
 * Parse a duration from AUTOPROF_<which> (a number with ms, s, m or h; a
 * bare number is seconds; at least 100 ms, at most 7 days) into ns; unset
 * is 0. Returns 0, or -EINVAL after saying what is wrong.
 */
static int parse_duration(int which, uint64_t *out)
{
	static const struct {
		const char *unit;
		double ns;
	} units[] = {{"ms", 1e6}, {"s", 1e9}, {"", 1e9}, {"m", 60e9}, {"min", 60e9}, {"h", 3600e9}};
	bool set;
	const char *s = env_get(which, &set);
	char *end;
	double v;

	*out = 0;
	if (!*s)
		return 0;
	errno = 0;
	v = strtod(s, &end);
	if (*s != '-' && !errno && end != s)
		for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (!strcmp(end, units[i].unit) && v * units[i].ns >= 1e8 &&
			    v * units[i].ns <= 7 * 86400e9) {
				*out = (uint64_t)(v * units[i].ns);
				return 0;
			}
	pr_warn("%s='%s' is not a duration from 100ms to 7 days (such as 500ms, 10s, 5m, 1h); "
		"not profiling",
		env_name[which], s);
	return -EINVAL;
}

static int parse_bool(int which, bool *out)
{
	bool set;
	const char *s = env_get(which, &set);

	if (!strcmp(s, "1") || !strcasecmp(s, "yes") || !strcasecmp(s, "on") ||
	    !strcasecmp(s, "true")) {
		*out = true;
		return 0;
	}
	if (!strcmp(s, "0") || !strcasecmp(s, "no") || !strcasecmp(s, "off") ||
	    !strcasecmp(s, "false")) {
		*out = false;
		return 0;
	}
	pr_warn("%s='%s' is not 0 or 1; not profiling", env_name[which], s);
	return -EINVAL;
}

const char *config__callgraph_name(enum ap_callgraph cg)
{
	return cg == AP_CG_FP ? "fp" : cg == AP_CG_NONE ? "none" : "libunwind";
}

/* SIGRTMIN+N, RTMIN+N, SIGPROF, PROF or a number; 0 when it names no usable signal. */
static int parse_signal(const char *s)
{
	static const struct {
		const char *name;
		int signo;
	} names[] = {{"PROF", SIGPROF}, {"VTALRM", SIGVTALRM}, {"ALRM", SIGALRM},
		     {"USR1", SIGUSR1}, {"USR2", SIGUSR2},     {"IO", SIGIO},
		     {"URG", SIGURG},	{"WINCH", SIGWINCH}};
	char *end;
	long n;

	if (!strncasecmp(s, "SIG", 3))
		s += 3;
	if (!strncasecmp(s, "RTMIN", 5)) {
		n = 0;
		if (s[5]) {
			if (s[5] != '+')
				return 0;
			n = strtol(s + 6, &end, 10);
			if (end == s + 6 || *end)
				return 0;
		}
		return n >= 0 && SIGRTMIN + n <= SIGRTMAX ? SIGRTMIN + (int)n : 0;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcasecmp(s, names[i].name))
			return names[i].signo;
	n = strtol(s, &end, 10);
	if (end == s || *end || n <= 0 || n > SIGRTMAX)
		return 0;
	/* Signals that cannot be caught or that report faults are never ours. */
	if (n == SIGKILL || n == SIGSTOP || n == SIGSEGV || n == SIGBUS || n == SIGFPE ||
	    n == SIGILL || n == SIGABRT || n == SIGTRAP || n == SIGCHLD)
		return 0;
	if (n < SIGRTMIN && n >= 32)
		return 0; /* glibc's own real-time signals */
	return (int)n;
}

/*
 * Fill *cfg from the environment. Returns 0, or -EINVAL when a variable has a
 * bad value (already reported). Not async-signal-safe.
 */
int config__parse(struct ap_config *cfg)
{
	char why[256];
	bool set, b;
	uint64_t v;
	const char *s;

	memset(cfg, 0, sizeof(*cfg));

	if (parse_bool(ENV_QUIET, &b))
		return -EINVAL;
	cfg->quiet = ap_quiet = b;
	if (parse_u64(ENV_VERBOSE, 0, 9, &v) == 0) {
		cfg->verbose = ap_verbose = (int)v;
	} else {
		/* AUTOPROF_VERBOSE=yes is a switch too */
		if (parse_bool(ENV_VERBOSE, &b))
			return -EINVAL;
		cfg->verbose = ap_verbose = b;
	}

	s = env_get(ENV_OUTPUT, &set);
	if (strlen(s) >= sizeof(cfg->output)) {
		pr_warn("AUTOPROF_OUTPUT is longer than %zu bytes; not profiling",
			sizeof(cfg->output) - 1);
		return -EINVAL;
	}
	strcpy(cfg->output, s);

	s = env_get(ENV_EVENT, &set);
	cfg->event_auto = !set;
	if (!set)
		s = "cycles";
	if (strlen(s) >= sizeof(cfg->event_name)) {
		pr_warn("AUTOPROF_EVENT='%.40s...' is too long; not profiling", s);
		return -EINVAL;
	}
	if (ap_event__parse(s, &cfg->event, why, sizeof(why))) {
		pr_warn("AUTOPROF_EVENT='%s': %s; not profiling", s, why);
		return -EINVAL;
	}
	strcpy(cfg->event_name, s);

	if (parse_u64(ENV_PERIOD, 1, UINT64_MAX >> 1, &cfg->period))
		return -EINVAL;
	if (!cfg->period && parse_u64(ENV_FREQ, 1, 1000000, &cfg->freq))
		return -EINVAL;

	s = env_get(ENV_MODE, &set);
	if (!strcmp(s, "auto")) {
		cfg->mode = AP_MODE_AUTO;
	} else if (!strcmp(s, "perf")) {
		cfg->mode = AP_MODE_PERF;
	} else if (!strcmp(s, "timer")) {
		cfg->mode = AP_MODE_TIMER;
	} else {
		pr_warn("AUTOPROF_MODE='%s' is not auto, perf or timer; not profiling", s);
		return -EINVAL;
	}

	s = env_get(ENV_CALLGRAPH, &set);
	if (!strcmp(s, "libunwind") || !strcmp(s, "dwarf")) {
		cfg->callgraph = AP_CG_LIBUNWIND;
	} else if (!strcmp(s, "fp")) {
		cfg->callgraph = AP_CG_FP;
	} else if (!strcmp(s, "none") || !strcmp(s, "no")) {
		cfg->callgraph = AP_CG_NONE;
	} else {
		pr_warn("AUTOPROF_CALLGRAPH='%s' is not libunwind, fp or none; not profiling", s);
		return -EINVAL;
	}

	if (parse_u64(ENV_STACK_DEPTH, 1, 1024, &v))
		return -EINVAL;
	cfg->stack_depth = (unsigned)v;
	if (parse_u64(ENV_BATCH, 0, 1024, &v))
		return -EINVAL;
	cfg->batch = v ? (unsigned)v : 1;
	if (parse_u64(ENV_STACK_COPY, 512, 60000, &v))
		return -EINVAL;
	cfg->stack_copy = (unsigned)(v + 7) & ~7U;

	if (parse_bool(ENV_STAT, &cfg->stat) || parse_bool(ENV_KERNEL, &cfg->kernel) ||
	    parse_bool(ENV_FOLLOW, &cfg->follow) || parse_bool(ENV_AGGREGATE, &cfg->aggregate) ||
	    parse_bool(ENV_AGGREGATE_CHECK, &cfg->aggregate_check) ||
	    parse_bool(ENV_OFFCPU, &cfg->offcpu) || parse_bool(ENV_START, &cfg->start) ||
	    parse_bool(ENV_MEMORY, &cfg->memory) ||
	    parse_u64(ENV_MEMORY_INTERVAL, 1, 1ULL << 40, &cfg->memory_interval))
		return -EINVAL;
	if (parse_duration(ENV_WINDOW, &cfg->window_ns) || parse_u64(ENV_KEEP, 0, 100000, &v))
		return -EINVAL;
	cfg->keep = (unsigned)v;
	s = env_get(ENV_COUNTERS, &set);
	if (strlen(s) >= sizeof(cfg->counters)) {
		pr_warn("AUTOPROF_COUNTERS is longer than %zu bytes; not profiling",
			sizeof(cfg->counters) - 1);
		return -EINVAL;
	}
	strcpy(cfg->counters, s);
	{ /* every name and group must parse before anything runs */
		static struct ap_counters check;

		if (counters__parse(&check, cfg->counters))
			return -EINVAL;
	}
	s = env_get(ENV_COUNTER_FDS, &set);
	if (strlen(s) >= sizeof(cfg->counter_fds)) {
		pr_warn("AUTOPROF_COUNTER_FDS is too long; not profiling");
		return -EINVAL;
	}
	strcpy(cfg->counter_fds, s);

	s = env_get(ENV_SIGNAL, &set);
	/* SIGPROF: a standard signal is pending at most once per thread, so
	 * notifications can never fill the real-time queue (whose overflow the
	 * kernel turns into a SIGIO), and debuggers pass it silently. */
	cfg->signo = set ? parse_signal(s) : SIGPROF;
	if (!cfg->signo) {
		pr_warn("AUTOPROF_SIGNAL='%s' is not a signal the profiler can use (try PROF or "
			"RTMIN+5); not profiling",
			s);
		return -EINVAL;
	}
	return 0;
}
