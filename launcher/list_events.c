// SPDX-License-Identifier: MIT
/*
 * list_events.c - `autoprof list [FILTER]`: the event names -e and --counters
 * take, as `perf list` shows them: perf's hardware and software events, the
 * generic cache events, and this CPU's own PMU events through libpfm4.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "autoprof/events.h"
#include "launcher.h"
#include "pmu_names.h"

static const char *const cache_names[] = {"L1-dcache", "L1-icache", "LLC", "dTLB",
					  "iTLB",      "branch",    "node"};
static const char *const cache_ops[] = {"load", "store", "prefetch"};
static const char *const cache_ops_plural[] = {"loads", "stores", "prefetches"};

static int show(const char *filter, const char *name, const char *kind)
{
	if (filter && !strcasestr(name, filter))
		return 0;
	printf("  %-44s [%s]\n", name, kind);
	return 1;
}

int list_events__run(int argc, char **argv)
{
	const char *filter = argc > 0 ? argv[0] : NULL;
	char name[96];
	int n = 0, pmu;

	if (argc > 1) {
		fprintf(stderr, "autoprof: usage: autoprof list [FILTER]\n");
		return 2;
	}
	printf("Events for -e/--event and --counters (perf's names; append :u, :k or :p as "
	       "with perf):\n\n");
#define SHOW_ROW(nm, alias, type, config)                                                          \
	do {                                                                                       \
		if (alias)                                                                         \
			snprintf(name, sizeof(name), "%s OR %s", nm, (const char *)alias);         \
		else                                                                               \
			snprintf(name, sizeof(name), "%s", nm);                                    \
		n += show(filter, name,                                                            \
			  type == PERF_TYPE_HARDWARE ? "Hardware event" : "Software event");       \
	} while (0);
	AUTOPROF_EVENT_TABLE(SHOW_ROW)
#undef SHOW_ROW
	for (size_t c = 0; c < sizeof(cache_names) / sizeof(cache_names[0]); c++)
		for (size_t o = 0; o < sizeof(cache_ops) / sizeof(cache_ops[0]); o++) {
			snprintf(name, sizeof(name), "%s-%s", cache_names[c], cache_ops_plural[o]);
			n += show(filter, name, "Hardware cache event");
			snprintf(name, sizeof(name), "%s-%s-misses", cache_names[c], cache_ops[o]);
			n += show(filter, name, "Hardware cache event");
		}
	n += show(filter, "rNNNN", "Raw hardware event descriptor");
	fflush(stdout);
	pmu = pmu_names__list(stdout, filter);
	if (pmu < 0)
		printf("\nlibpfm4 knows no PMU of this CPU: only the names above.\n");
	else
		n += pmu;
	if (access("/sys/bus/event_source/devices/cpu", F_OK) &&
	    access("/sys/bus/event_source/devices/cpu_core", F_OK))
		printf("\nNote: the kernel has no hardware PMU here (a VM without one?): only "
		       "software events can be opened; -e falls back to cpu-clock.\n");
	if (filter && !n) {
		fprintf(stderr, "autoprof: no event name contains '%s'\n", filter);
		return 1;
	}
	return 0;
}
