/* SPDX-License-Identifier: MIT */
/*
 * outside_plan.c - what an outside run samples and how (outside.h): the
 * options as one perf_event_attr (frame-pointer chains from the kernel, or
 * user register and stack copies to unwind), settled once before any target
 * (outside_events.c opens it). Not async-signal-safe.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "autoprof/env.h"
#include "common.h"
#include "handler/handler.h"
#include "launcher.h"
#include "outside.h"

#if defined(__x86_64__)
/* perf's mask for x86-64: every register but ds, es, fs, gs */
#define USER_REGS_MASK 0xff0fffULL
#elif defined(__aarch64__)
#define USER_REGS_MASK ((1ULL << 33) - 1)
#else
#define USER_REGS_MASK 0ULL
#endif

static long event_open(struct perf_event_attr *a, pid_t pid, int cpu, int group)
{
	return syscall(SYS_perf_event_open, a, pid, cpu, group, PERF_FLAG_FD_CLOEXEC);
}

static int read_int(const char *path)
{
	char buf[32];

	return raw_syscall__read_file(path, buf, sizeof(buf)) > 0 ? atoi(buf) : -1;
}

/*
 * Settle the event once, before any target: where the default cycles is
 * missing (no PMU), cpu-clock stands in. Probed on the launcher itself: a
 * missing event is missing for every target.
 */
static void settle_event(struct outside_plan *p)
{
	long fd;

	if (!p->cfg.event_auto)
		return;
	fd = event_open(&p->attr, 0, -1, -1);
	if (fd >= 0) {
		close((int)fd);
		return;
	}
	if (errno != ENOENT && errno != EOPNOTSUPP)
		return; /* said when the targets' events fail the same way */
	p->cfg.event =
	    (struct ap_event){.type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK};
	strcpy(p->cfg.event_name, "cpu-clock");
	p->cfg.event_auto = false;
	p->attr.type = PERF_TYPE_SOFTWARE;
	p->attr.config = PERF_COUNT_SW_CPU_CLOCK;
}

void outside_plan__attr(struct outside_plan *p, bool fp, bool enable_on_exec, bool inherit)
{
	struct perf_event_attr *a = &p->attr;
	int max_stack = read_int("/proc/sys/kernel/perf_event_max_stack");
	long page = sysconf(_SC_PAGESIZE);

	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	events__apply(&p->cfg.event, a);
	if (p->cfg.period) {
		a->sample_period = p->cfg.period;
	} else {
		a->freq = 1;
		a->sample_freq = p->cfg.freq;
	}
	a->sample_type = AUTOPROF_SAMPLE_TYPE;
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->mmap = 1;
	a->mmap2 = 1;
	a->comm = 1;
	a->comm_exec = 1;
	a->task = 1;
	a->inherit = inherit;
	a->disabled = enable_on_exec;
	a->enable_on_exec = enable_on_exec;
	a->exclude_kernel = !p->cfg.kernel || a->exclude_kernel;
	a->exclude_hv = 1;
	a->exclude_callchain_kernel = !p->cfg.kernel;
	a->watermark = 1;
	a->wakeup_watermark = (uint32_t)(OUTSIDE_RING_PAGES * page / 4);
	a->sample_max_stack = (uint16_t)(max_stack > 0 && (unsigned)max_stack < p->cfg.stack_depth
					     ? (unsigned)max_stack
					     : p->cfg.stack_depth);
	p->dwarf = false;
	if (p->cfg.callgraph == AP_CG_NONE) {
		a->exclude_callchain_user = 1;
		p->stacks = "none (--call-graph none)";
	} else if (fp || !USER_REGS_MASK) {
		p->stacks = "frame-pointer chains from the kernel";
	} else {
		a->exclude_callchain_user = 1; /* the kernel's part only; the user part unwound */
		a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		a->sample_regs_user = USER_REGS_MASK;
		a->sample_stack_user = OUTSIDE_STACK_COPY;
		a->wakeup_watermark *= 4;
		p->dwarf = true;
		p->stacks = "DWARF unwinding of register and stack copies";
	}
	/*
	 * The side-band records (maps, names, forks, exits) come from a dummy
	 * event of their own, as perf record's tracking event: they go on
	 * while sampling is stopped (AUTOPROF_START=0, `autoprof ctl stop`).
	 */
	p->track = *a;
	p->track.type = PERF_TYPE_SOFTWARE;
	p->track.config = PERF_COUNT_SW_DUMMY;
	p->track.freq = 0;
	p->track.sample_period = 1;
	a->mmap = a->mmap2 = a->comm = a->comm_exec = a->task = 0;
	if (!p->cfg.start) { /* started paused: `autoprof ctl PID start` enables it */
		a->disabled = 1;
		a->enable_on_exec = 0;
	}
	settle_event(p);
}

/* The options as the library reads them; those that do not apply said. Returns 0. */
int outside_plan__init(struct outside_plan *p, int quiet)
{
	static const struct {
		enum ap_env var;
		const char *flag;
	} unused[] = {{AP_ENV_OFFCPU, "--off-cpu"},
		      {AP_ENV_BATCH, "--batch"},
		      {AP_ENV_STACK_COPY, "--stack-copy"},
		      {AP_ENV_SIGNAL, "--signal"},
		      {AP_ENV_MODE, "--mode"},
		      {AP_ENV_FOLLOW, "--follow"},
		      {AP_ENV_AGGREGATE_CHECK, "AUTOPROF_AGGREGATE_CHECK"},
		      {AP_ENV_COST, "AUTOPROF_COST"},
		      {AP_ENV_MEMORY, "--memory"}};
	char list[256] = "";

	p->cfg = *launcher__options(); /* read once, by main() */
	ap_quiet = p->cfg.quiet;       /* the shared code's warnings, as the library's */
	for (size_t i = 0; i < sizeof(unused) / sizeof(unused[0]); i++) {
		const char *v = ap_env(unused[i].var);

		if (unused[i].var == AP_ENV_FOLLOW)
			v = v && !strcmp(v, "0") ? v : NULL; /* 1 is what outside mode does */
		else if (v && (!strcmp(v, "0") || !strcmp(v, ap_env_default(unused[i].var))))
			v = NULL; /* (asks for what outside mode does, or the default) */
		if (v && *v && strlen(list) + 16 < sizeof(list))
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
				 list[0] ? ", " : "", unused[i].flag);
	}
	if (list[0] && !quiet)
		fprintf(stderr,
			"autoprof: %s: not applied from outside (the kernel samples every "
			"thread and child of the run, stacks unwound by the launcher; "
			"doc/outside.md)\n",
			list);
	return 0;
}

/* How the events sample, for the mode line: "cpu-clock at 1000 Hz". */
const char *outside_plan__rate(const struct outside_plan *p)
{
	static char buf[128];

	if (p->cfg.period)
		snprintf(buf, sizeof(buf), "%s every %llu events", p->cfg.event_name,
			 (unsigned long long)p->cfg.period);
	else
		snprintf(buf, sizeof(buf), "%s at %llu Hz", p->cfg.event_name,
			 (unsigned long long)p->cfg.freq);
	return buf;
}
