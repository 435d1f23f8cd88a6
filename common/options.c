/* SPDX-License-Identifier: MIT */
/*
 * options.c - read every AUTOPROF_* variable the library runs with once,
 * strictly, into one raw struct (settled by preload/session/settle.c).
 *
 * A bad value is reported in one line naming the variable and the value, and
 * makes options__parse() fail: the caller then leaves the program unprofiled.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "autoprof/env.h"
#include "common.h"

/* The value of AUTOPROF_<which>, or the table's default when unset or empty. */
static const char *env_get(enum ap_env which, bool *set)
{
	const char *v = ap_env(which);

	*set = v && *v;
	return *set ? v : ap_env_default(which);
}

/*
 * Parse a whole decimal number in [lo, hi] from AUTOPROF_<which>.
 * Returns 0, or -EINVAL after saying what is wrong.
 */
static int parse_u64(enum ap_env which, uint64_t lo, uint64_t hi, uint64_t *out)
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
			ap_env_name(which), s, (unsigned long long)lo, (unsigned long long)hi);
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
static int parse_duration(enum ap_env which, uint64_t *out)
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
		ap_env_name(which), s);
	return -EINVAL;
}

/* Is s a switch's word (1, yes, on, true; 0, no, off, false)? Its value in *out. */
static bool switch_word(const char *s, bool *out)
{
	*out = ap_env_word_on(s);
	return *out || !strcmp(s, "0") || !strcasecmp(s, "no") || !strcasecmp(s, "off") ||
	       !strcasecmp(s, "false");
}

/* Parse a switch from AUTOPROF_<which>. Returns 0, or -EINVAL after saying what is wrong. */
static int parse_bool(enum ap_env which, bool *out)
{
	bool set;
	const char *s = env_get(which, &set);

	if (switch_word(s, out))
		return 0;
	pr_warn("%s='%s' is not 0 or 1; not profiling", ap_env_name(which), s);
	return -EINVAL;
}

const char *options__callgraph_name(enum ap_callgraph cg)
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

int options__parse(struct ap_config *cfg)
{
	char why[256];
	bool set, b;
	uint64_t v;
	const char *s;

	memset(cfg, 0, sizeof(*cfg));

	if (parse_bool(AP_ENV_QUIET, &b))
		return -EINVAL;
	cfg->quiet = ap_quiet = b;
	/* A level, 0 to 9; AUTOPROF_VERBOSE=yes is a switch too (level 1). */
	s = env_get(AP_ENV_VERBOSE, &set);
	if (s[strspn(s, "0123456789")] == 0) {
		if (parse_u64(AP_ENV_VERBOSE, 0, 9, &v))
			return -EINVAL;
		cfg->verbose = ap_verbose = (int)v;
	} else if (switch_word(s, &b)) {
		cfg->verbose = ap_verbose = b;
	} else {
		pr_warn("AUTOPROF_VERBOSE='%s' is not a level from 0 to 9, nor yes or no; not "
			"profiling",
			s);
		return -EINVAL;
	}

	s = env_get(AP_ENV_OUTPUT, &set);
	if (strlen(s) >= sizeof(cfg->output)) {
		pr_warn("AUTOPROF_OUTPUT is longer than %zu bytes; not profiling",
			sizeof(cfg->output) - 1);
		return -EINVAL;
	}
	strcpy(cfg->output, s);

	s = env_get(AP_ENV_EVENT, &set);
	cfg->event_auto = !set;
	if (!set)
		s = "cycles";
	if (strlen(s) >= sizeof(cfg->event_name)) {
		pr_warn("AUTOPROF_EVENT='%.40s...' is too long; not profiling", s);
		return -EINVAL;
	}
	if (events__parse(s, &cfg->event, why, sizeof(why))) {
		pr_warn("AUTOPROF_EVENT='%s': %s; not profiling", s, why);
		return -EINVAL;
	}
	strcpy(cfg->event_name, s);

	if (parse_u64(AP_ENV_PERIOD, 1, UINT64_MAX >> 1, &cfg->period))
		return -EINVAL;
	if (!cfg->period && parse_u64(AP_ENV_FREQ, 1, 1000000, &cfg->freq))
		return -EINVAL;

	s = env_get(AP_ENV_MODE, &set);
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

	s = env_get(AP_ENV_CALLGRAPH, &set);
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

	if (parse_u64(AP_ENV_STACK_DEPTH, 1, 1024, &v))
		return -EINVAL;
	cfg->stack_depth = (unsigned)v;
	if (parse_u64(AP_ENV_BATCH, 0, 1024, &v))
		return -EINVAL;
	cfg->batch = v ? (unsigned)v : 1;
	if (parse_u64(AP_ENV_STACK_COPY, 512, 60000, &v))
		return -EINVAL;
	cfg->stack_copy = (unsigned)(v + 7) & ~7U;

	if (parse_bool(AP_ENV_STAT, &cfg->stat) || parse_bool(AP_ENV_KERNEL, &cfg->kernel) ||
	    parse_bool(AP_ENV_FOLLOW, &cfg->follow) ||
	    parse_bool(AP_ENV_AGGREGATE, &cfg->aggregate) ||
	    parse_bool(AP_ENV_AGGREGATE_CHECK, &cfg->aggregate_check) ||
	    parse_bool(AP_ENV_OFFCPU, &cfg->offcpu) || parse_bool(AP_ENV_START, &cfg->start) ||
	    parse_bool(AP_ENV_MEMORY, &cfg->memory) ||
	    parse_u64(AP_ENV_MEMORY_INTERVAL, 1, 1ULL << 40, &cfg->memory_interval))
		return -EINVAL;
	s = ap_env(AP_ENV_COST); /* any value but 0, as the benchmarks set it */
	cfg->cost = s && *s && strcmp(s, "0") != 0;
	if (parse_duration(AP_ENV_WINDOW, &cfg->window_ns) || parse_u64(AP_ENV_KEEP, 0, 100000, &v))
		return -EINVAL;
	cfg->keep = (unsigned)v;
	s = env_get(AP_ENV_COUNTERS, &set);
	if (strlen(s) >= sizeof(cfg->counters)) {
		pr_warn("AUTOPROF_COUNTERS is longer than %zu bytes; not profiling",
			sizeof(cfg->counters) - 1);
		return -EINVAL;
	}
	strcpy(cfg->counters, s);
	{ /* every name and group must parse before anything runs */
		static struct ap_counters check;

		if (counting__parse(&check, cfg->counters))
			return -EINVAL;
	}
	s = env_get(AP_ENV_COUNTER_FDS, &set);
	if (strlen(s) >= sizeof(cfg->counter_fds)) {
		pr_warn("AUTOPROF_COUNTER_FDS is too long; not profiling");
		return -EINVAL;
	}
	strcpy(cfg->counter_fds, s);

	s = env_get(AP_ENV_SIGNAL, &set);
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
