/*
 * Unit test: the configuration settled once (preload/session/settle.c):
 * the frequency clamps, the event probe's fallbacks (kernel samples
 * dropped, cpu-clock for a missing cycles), the timer source, the rate as a
 * period, the output made absolute, each change said, and the raw
 * configuration left as read. The probe is a fake that refuses what each
 * case's machine would refuse.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "tap.h"

/* The fake machine: what its perf_event_open refuses. */
static struct {
	bool no_pmu;	 /* hardware events: ENOENT */
	bool no_kernel;	 /* kernel samples: EACCES */
	int refuse_all;	 /* every event: this errno (0: none) */
	int calls;	 /* probes made */
	bool saw_kernel; /* a probe asked for kernel samples */
	int max_rate;	 /* kernel.perf_event_max_sample_rate (0: unknown, not enforced) */
	int rate_reads;	 /* readings of it */
} machine;

static int fake_max_rate(void)
{
	machine.rate_reads++;
	return machine.max_rate;
}

static int fake_probe(const struct perf_event_attr *attr)
{
	machine.calls++;
	machine.saw_kernel |= !attr->exclude_kernel;
	if (machine.refuse_all)
		return -machine.refuse_all;
	if (machine.no_kernel && !attr->exclude_kernel)
		return -EACCES;
	/* the kernel's order: kernel samples, then the frequency, then the event */
	if (machine.max_rate && attr->freq && attr->sample_freq > (uint64_t)machine.max_rate)
		return -EINVAL;
	if (machine.no_pmu && attr->type == PERF_TYPE_HARDWARE)
		return -ENOENT;
	return 0;
}

static struct ap_config raw, before;
static struct ap_settled out;
static struct settle_facts facts;
static char said[512];	/* the first warning settling gave */
static int raw_changed; /* settlings that changed the raw configuration */

static void bail(const char *var, const char *value)
{
	printf("Bail out! options__parse refused %s=%s\n", var ? var : "", value ? value : "");
	exit(255);
}

/* A fresh raw configuration from @var=@value (NULL: the defaults) on a machine with a PMU. */
static void asked(const char *var, const char *value)
{
	static const char *const vars[] = {
	    "AUTOPROF_EVENT",  "AUTOPROF_FREQ",	     "AUTOPROF_PERIOD", "AUTOPROF_MODE",
	    "AUTOPROF_KERNEL", "AUTOPROF_CALLGRAPH", "AUTOPROF_OUTPUT"};

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
	if (var)
		setenv(var, value, 1);
	if (options__parse(&raw))
		bail(var, value);
	memset(&machine, 0, sizeof(machine));
	machine.max_rate = 100000;
	facts = (struct settle_facts){.max_rate = fake_max_rate, .probe = fake_probe};
}

/* Also @var=@value on top of what asked() set. */
static void also(const char *var, const char *value)
{
	setenv(var, value, 1);
	if (options__parse(&raw))
		bail(var, value);
}

static int settle(void)
{
	int err;

	before = raw;
	log__capture(said, sizeof(said));
	err = settle__config(&raw, &facts, &out);
	log__capture(NULL, 0);
	raw_changed += memcmp(&before, &raw, sizeof(raw)) != 0;
	return err;
}

static bool said_has(const char *what)
{
	return strstr(said, what) != NULL;
}

int main(void)
{
	setenv("AUTOPROF_QUIET", "1", 1);
	plan(36);

	asked(NULL, NULL);
	ok(settle() == 0 && !out.timer_mode && !strcmp(out.event_name, "cycles") &&
	       out.event.type == PERF_TYPE_HARDWARE && !out.fell_back && !said[0],
	   "defaults on a machine with a PMU: cycles, nothing said");
	ok(out.freq == 1000 && out.period == 0 && out.interval_ns == 1000000 && out.hz == 1000,
	   "1000 Hz is an interval of 1 ms, converted once");
	ok(out.attr.freq && out.attr.sample_freq == 1000 && out.attr.exclude_kernel &&
	       out.attr.type == PERF_TYPE_HARDWARE,
	   "the attr samples cycles at 1000 Hz, user space only");
	ok(machine.calls == 1, "one probe when it succeeds (%d)", machine.calls);
	ok(machine.rate_reads == 0,
	   "a rate within the kernel's limit does not read the limit (%d readings)",
	   machine.rate_reads);

	asked("AUTOPROF_FREQ", "250000");
	ok(settle() == 0 && out.freq == 100000 && out.attr.sample_freq == 100000 &&
	       out.interval_ns == 10000,
	   "a frequency above kernel.perf_event_max_sample_rate is clamped to it");
	ok(said_has("AUTOPROF_FREQ=250000 is above kernel.perf_event_max_sample_rate; using "
		    "100000"),
	   "and said: %s", said);
	ok(machine.rate_reads == 1 && machine.calls == 2,
	   "the limit read once, after the probe refused the rate (%d readings, %d probes)",
	   machine.rate_reads, machine.calls);

	asked("AUTOPROF_FREQ", "250000");
	also("AUTOPROF_KERNEL", "1");
	machine.no_kernel = true;
	machine.no_pmu = true;
	int err = settle();
	ok(err == 0 && out.freq == 20000 && !out.kernel && out.fell_back &&
	       !strcmp(out.event_name, "cpu-clock") && machine.calls == 4,
	   "kernel samples refused, the rate clamped, cycles missing: four probes, then "
	   "cpu-clock's own clamp (%d, %d, %llu "
	   "Hz, kernel %d, %s)",
	   machine.calls, err, (unsigned long long)out.freq, out.kernel, out.event_name);

	asked("AUTOPROF_FREQ", "250000");
	machine.max_rate = 0;
	ok(settle() == 0 && out.freq == 250000 && !said[0],
	   "an unknown kernel limit clamps nothing");

	asked("AUTOPROF_EVENT", "cpu-clock");
	also("AUTOPROF_FREQ", "50000");
	ok(settle() == 0 && out.freq == 20000 && out.attr.sample_freq == 20000 &&
	       out.interval_ns == 50000 && out.hz == 20000,
	   "cpu-clock above 20 kHz is clamped to 20 kHz");
	ok(said_has("cpu-clock samples at 50000 Hz would come from a timer interrupt every "
		    "20000 ns"),
	   "and said: %s", said);

	asked("AUTOPROF_EVENT", "task-clock");
	also("AUTOPROF_PERIOD", "10000");
	ok(settle() == 0 && out.period == 50000 && out.attr.sample_period == 50000 &&
	       out.interval_ns == 50000 && out.hz == 20000,
	   "a task-clock period under 50 us is raised to 50 us");
	ok(said_has("task-clock samples every 10000 ns would take the whole CPU"), "and said: %s",
	   said);

	asked("AUTOPROF_FREQ", "50000");
	ok(settle() == 0 && out.freq == 50000, "cycles (not timer-driven) keeps 50 kHz");

	asked("AUTOPROF_PERIOD", "2000000");
	ok(settle() == 0 && out.period == 2000000 && out.freq == 0 && out.interval_ns == 2000000 &&
	       out.hz == 500 && !out.attr.freq && out.attr.sample_period == 2000000,
	   "a period is its own interval; its rate is 1e9 / period");

	asked(NULL, NULL);
	machine.no_pmu = true;
	ok(settle() == 0 && !strcmp(out.event_name, "cpu-clock") &&
	       out.event.type == PERF_TYPE_SOFTWARE &&
	       out.event.config == PERF_COUNT_SW_CPU_CLOCK && out.fell_back == ENOENT &&
	       out.attr.type == PERF_TYPE_SOFTWARE,
	   "no PMU: the default cycles falls back to cpu-clock (fell_back ENOENT)");
	ok(machine.calls == 2 && !said[0],
	   "two probes, and the fallback left for the caller to say with the counters");

	asked("AUTOPROF_FREQ", "30000");
	machine.no_pmu = true;
	ok(settle() == 0 && out.freq == 20000 && said_has("cpu-clock samples at 30000 Hz"),
	   "the cpu-clock that stands in is clamped to 20 kHz too");

	asked("AUTOPROF_EVENT", "cycles");
	machine.no_pmu = true;
	ok(settle() == -ENOENT && said_has("cannot open a cycles sampling event"),
	   "cycles asked by name has no fallback: %s", said);

	asked("AUTOPROF_KERNEL", "1");
	machine.no_kernel = true;
	ok(settle() == 0 && !out.kernel && out.attr.exclude_kernel && machine.saw_kernel &&
	       !out.timer_mode && machine.calls == 2,
	   "kernel samples not permitted: dropped, user space sampled by perf (2 probes)");
	ok(said_has("AUTOPROF_KERNEL: kernel samples are not permitted here"), "and said: %s",
	   said);

	asked("AUTOPROF_KERNEL", "1");
	machine.no_kernel = machine.no_pmu = true;
	ok(settle() == 0 && !out.kernel && !strcmp(out.event_name, "cpu-clock") &&
	       !out.timer_mode && out.fell_back == ENOENT && machine.calls == 3,
	   "both fallbacks in turn, three probes, no more");

	asked(NULL, NULL);
	machine.refuse_all = EACCES;
	facts.say_timers = true;
	facts.no_counters = true;
	ok(settle() == 0 && out.timer_mode && !strcmp(out.event_name, "cpu-clock") && !out.kernel,
	   "perf_event_open refused (mode auto): the timers sample");
	ok(said_has("perf_event_open is refused here") && said_has("; no counters"),
	   "and said, with the counters: %s", said);
	ok(out.attr.type == PERF_TYPE_SOFTWARE && out.attr.config == PERF_COUNT_SW_CPU_CLOCK &&
	       !out.attr.freq && out.attr.sample_period == 1000000 && out.attr.exclude_kernel,
	   "the timers' attr: a user-only cpu-clock every 1 ms");

	asked("AUTOPROF_CALLGRAPH", "fp");
	also("AUTOPROF_KERNEL", "1");
	machine.refuse_all = EPERM;
	ok(settle() == 0 && out.timer_mode && out.callgraph == AP_CG_LIBUNWIND && !out.kernel &&
	       said_has("kernel samples are not permitted"),
	   "timers: fp stacks become libunwind, kernel samples off (said first)");

	asked("AUTOPROF_MODE", "perf");
	machine.refuse_all = EACCES;
	ok(settle() == -EACCES && said_has("cannot open a cycles sampling event"),
	   "AUTOPROF_MODE=perf where perf is refused: no timers, an error said");

	asked("AUTOPROF_MODE", "timer");
	also("AUTOPROF_FREQ", "250000");
	also("AUTOPROF_KERNEL", "1");
	also("AUTOPROF_CALLGRAPH", "fp");
	ok(settle() == 0 && out.timer_mode && machine.calls == 0 && out.freq == 250000 &&
	       out.interval_ns == 4000 && !said[0],
	   "AUTOPROF_MODE=timer: no probe, no clamp, nothing said");
	ok(!out.kernel && out.callgraph == AP_CG_LIBUNWIND && !strcmp(out.event_name, "cpu-clock"),
	   "timers sample cpu-clock, user space, libunwind stacks");

	asked(NULL, NULL);
	machine.refuse_all = ENOENT;
	facts.no_counters = false;
	ok(settle() == -ENOENT && !out.timer_mode && machine.calls == 2,
	   "an event the kernel does not know is no refusal: no timers (cpu-clock tried once)");

	asked("AUTOPROF_OUTPUT", "out/x.data");
	facts.cwd = "/srv/run";
	ok(settle() == 0 && !strcmp(out.output, "/srv/run/out/x.data"),
	   "the first process names its output absolutely");
	asked("AUTOPROF_OUTPUT", "/tmp/y.data");
	facts.cwd = "/srv/run";
	ok(settle() == 0 && !strcmp(out.output, "/tmp/y.data"), "an absolute output stays");
	asked("AUTOPROF_OUTPUT", "z.data");
	ok(settle() == 0 && !strcmp(out.output, "z.data"),
	   "a descendant (no cwd given) keeps the output it inherited");
	asked(NULL, NULL);
	machine.refuse_all = EINVAL;
	facts.cwd = "/srv";
	ok(settle() == -EINVAL && !strcmp(out.output, "/srv/perf.data"),
	   "the output is settled even when no event can sample");
	ok(raw_changed == 0, "settling never changed the raw configuration (%d times)",
	   raw_changed);
	return tap_done();
}
