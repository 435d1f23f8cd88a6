/* SPDX-License-Identifier: MIT */
/*
 * perf_flags.c - the launcher's command line as people type it after years of
 * perf record: perf's spellings taken where they mean something here (-g
 * dwarf, -g alone, -F max), refused in one line naming what to use where
 * they do not (-a, -C, -b, --switch-output...), and a flag nobody knows or
 * one missing its argument said in one line, never the whole help.
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common.h"
#include "launcher.h"

/* perf record's flags that have no meaning here, and what to do instead. */
static const struct {
	int short_flag;
	const char *long_flag, *why;
} refused[] = {
    {'a', "all-cpus",
     "autoprof profiles a command (or -p PID, -t TID), not every CPU of the machine; perf "
     "record -a does that"},
    {'C', "cpu",
     "autoprof profiles a command (or -p PID, -t TID), not CPUs; perf record -C does that"},
    {'u', "uid", "autoprof profiles a command (or -p PID, -t TID), not a user's processes"},
    {'G', "cgroup", "autoprof profiles a command (or -p PID, -t TID), not a cgroup"},
    {'b', "branch-any", "branch stacks (LBR) are not recorded"},
    {'j', "branch-filter", "branch stacks (LBR) are not recorded"},
    {'d', "data", "data addresses are not recorded"},
    {'I', "intr-regs", "registers are not recorded"},
    {0, "user-regs", "registers are not recorded"},
    {'R', "raw-samples", "raw tracepoint samples are not recorded"},
    {'W', "weight", "sample weights are not recorded"},
    {'m', "mmap-pages", "autoprof sizes each thread's ring buffer itself"},
    {'z', "compression-level", "files are written uncompressed"},
    {'i', "no-inherit",
     "threads are always profiled; --follow 0 leaves out children and exec'd programs"},
    {'D', "delay",
     "--start-paused, then `autoprof ctl PID start` when the interesting part begins"},
    {0, "switch-output", "--window DURATION writes one complete file per window"},
    {0, "overwrite", "--window DURATION --keep N keeps the newest windows"},
};
#define NREFUSED (int)(sizeof(refused) / sizeof(refused[0]))

/* A line to say once the options are read (-q is known then). */
static char note[512];

/* Is @elem a --name[=value] of an option of @longopts whose value is @val? */
static bool names_option(const char *elem, const struct option *longopts, int val)
{
	size_t len = strcspn(elem + 2, "=");

	if (strncmp(elem, "--", 2) || !len)
		return false;
	for (const struct option *o = longopts; o->name; o++)
		if (o->val == val && !strncmp(o->name, elem + 2, len))
			return true;
	return false;
}

int perf_flags__bad(int c, char **argv, const struct option *longopts)
{
	const char *elem = argv[optind - 1];
	bool is_long = !optopt || names_option(elem, longopts, optopt);
	size_t len = strcspn(elem + 2, "=");
	char flag[128];
	int matches = 0;

	if (is_long)
		snprintf(flag, sizeof(flag), "--%.*s", (int)len, elem + 2);
	else
		snprintf(flag, sizeof(flag), "-%c", optopt);
	if (c == ':') {
		fprintf(stderr, "autoprof: %s needs a value (see autoprof --help)\n", flag);
		return 2;
	}
	if (optopt && is_long) {
		fprintf(stderr, "autoprof: %s takes no value (see autoprof --help)\n", flag);
		return 2;
	}
	for (int i = 0; i < NREFUSED; i++)
		if (is_long ? !strcmp(refused[i].long_flag, flag + 2)
			    : refused[i].short_flag && refused[i].short_flag == optopt) {
			fprintf(stderr, "autoprof: %s (perf record's): %s\n", flag, refused[i].why);
			return 2;
		}
	if (is_long)
		for (const struct option *o = longopts; o->name; o++)
			matches += !strncmp(o->name, flag + 2, len);
	if (matches > 1) {
		fprintf(stderr, "autoprof: %s is ambiguous:", flag);
		for (const struct option *o = longopts; o->name; o++)
			if (!strncmp(o->name, flag + 2, len))
				fprintf(stderr, " --%s", o->name);
		fprintf(stderr, "\n");
		return 2;
	}
	fprintf(stderr, "autoprof: unknown option %s (see autoprof --help)\n", flag);
	return 2;
}

int perf_flags__call_graph(const char *arg, bool may_stand_alone, const char **value)
{
	if (!strcmp(arg, "libunwind") || !strcmp(arg, "fp") || !strcmp(arg, "none") ||
	    !strcmp(arg, "no")) {
		*value = arg;
		return 0;
	}
	if (!strcmp(arg, "dwarf") || !strncmp(arg, "dwarf,", 6)) {
		*value = "libunwind";
		snprintf(note, sizeof(note),
			 "-g %s: user stacks are unwound by their DWARF unwind info inside the "
			 "process (libunwind, autoprof's default), not copied into the file for "
			 "later as perf does%s",
			 arg, arg[5] ? "; the stack size is not needed" : "");
		return 0;
	}
	if (!strcmp(arg, "lbr")) {
		fprintf(stderr, "autoprof: -g lbr: LBR call stacks are not recorded; use -g "
				"libunwind (the default: DWARF unwinding) or -g fp\n");
		return 2;
	}
	if (may_stand_alone) { /* perf's -g takes no value: @arg is the next word */
		snprintf(note, sizeof(note),
			 "-g: user stacks are unwound by their DWARF unwind info (libunwind, "
			 "autoprof's default); -g fp uses frame-pointer chains as perf's -g does");
		return 1;
	}
	*value = arg; /* refused by the option check, in autoprof's words */
	return 0;
}

const char *perf_flags__freq(const char *arg, char *buf, size_t cap)
{
	char rate[32];
	ssize_t n;

	if (strcmp(arg, "max"))
		return arg;
	n = raw_syscall__read_file("/proc/sys/kernel/perf_event_max_sample_rate", rate,
				   sizeof(rate));
	if (n <= 0)
		return arg; /* refused by the option check */
	rate[strcspn(rate, "\n")] = 0;
	snprintf(buf, cap, "%s", rate);
	snprintf(note, sizeof(note), "-F max: %s Hz (kernel.perf_event_max_sample_rate)", rate);
	return buf;
}

void perf_flags__say(bool quiet)
{
	if (note[0] && !quiet)
		fprintf(stderr, "autoprof: %s\n", note);
}
