/* SPDX-License-Identifier: MIT */
/*
 * settle.c - the raw configuration (common/options.c) settled once into the
 * one the library runs with (settle.h): every clamp, probe and fallback in
 * one place, in the order they were always applied and said.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "internal.h"

/*
 * The highest rate of a timer-driven event (cpu-clock, task-clock). Its
 * samples come from an hrtimer interrupt the kernel re-arms one period
 * ahead; when an interrupt (the sample, its stack copy, the timer's own
 * reprogramming: exits on a virtual machine) takes longer than the period,
 * the CPU never leaves it. The kernel's own limit on sampling time
 * (kernel.perf_cpu_time_max_percent) applies to PMU interrupts only. Here
 * at 100 kHz (a 10 us period) a CPU stayed in interrupts for minutes (RCU
 * stalls, soft lockups), and no signal, not even SIGKILL, ended the program.
 */
#define TIMER_MAX_HZ 20000

/* The fields that pass unchanged, and the ones settled below as asked. */
static void copy_raw(const struct ap_config *raw, struct ap_settled *s)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->output, sizeof(s->output), "%s", raw->output);
	snprintf(s->event_name, sizeof(s->event_name), "%s", raw->event_name);
	s->event = raw->event;
	s->freq = raw->freq;
	s->period = raw->period;
	s->callgraph = raw->callgraph;
	s->stack_depth = raw->stack_depth;
	s->batch = raw->batch;
	s->stack_copy = raw->stack_copy;
	s->signo = raw->signo;
	s->verbose = raw->verbose;
	s->stat = raw->stat;
	s->kernel = raw->kernel;
	s->follow = raw->follow;
	s->aggregate = raw->aggregate;
	s->aggregate_check = raw->aggregate_check;
	s->offcpu = raw->offcpu;
	s->start = raw->start;
	s->memory = raw->memory;
	s->memory_interval = raw->memory_interval;
	s->cost = raw->cost;
	s->window_ns = raw->window_ns;
	s->keep = raw->keep;
	{
		const char *epoch = ap_env(AP_ENV_WINDOW_EPOCH); /* set by the launcher */

		s->window_epoch = epoch ? strtoull(epoch, NULL, 10) : 0;
	}
}

/* The first process names its file absolutely, for descendants that change directory. */
static void settle_output(struct ap_settled *s, const char *cwd)
{
	size_t dir, name = strlen(s->output);

	if (!cwd || s->output[0] == '/')
		return;
	dir = strlen(cwd);
	if (dir + name + 2 >= sizeof(s->output))
		return;
	memmove(s->output + dir + 1, s->output, name + 1);
	memcpy(s->output, cwd, dir);
	s->output[dir] = '/';
}

/* Is s's event timer-driven (cpu-clock, task-clock: its period is ns of CPU time)? */
static bool timer_driven(const struct ap_settled *s)
{
	return s->event.type == PERF_TYPE_SOFTWARE && (s->event.config == PERF_COUNT_SW_CPU_CLOCK ||
						       s->event.config == PERF_COUNT_SW_TASK_CLOCK);
}

/* Clamp a timer-driven event's rate to TIMER_MAX_HZ, saying so. */
static void clamp_timer_rate(struct ap_settled *s)
{
	uint64_t asked = s->freq, asked_period = s->period;

	if (!timer_driven(s))
		return;
	if (s->freq > TIMER_MAX_HZ) {
		s->freq = TIMER_MAX_HZ;
		pr_warn("%s samples at %llu Hz would come from a timer interrupt every %llu ns, "
			"which can take the whole CPU; sampling at %d Hz (the rate delivered is "
			"stated at the end)",
			s->event_name, (unsigned long long)asked,
			(unsigned long long)(1000000000ULL / asked), TIMER_MAX_HZ);
	} else if (s->period && s->period < 1000000000ULL / TIMER_MAX_HZ) {
		s->period = 1000000000ULL / TIMER_MAX_HZ;
		pr_warn("%s samples every %llu ns would take the whole CPU in timer interrupts; "
			"sampling every %llu ns",
			s->event_name, (unsigned long long)asked_period,
			1000000000ULL / TIMER_MAX_HZ);
	}
}

/*
 * The frequency clamped to the kernel's limit (read only now: the probe
 * found the frequency refused). Returns whether it was clamped (then said).
 */
static bool clamp_to_max_rate(const struct settle_facts *f, struct ap_settled *s)
{
	int max_rate = f->max_rate ? f->max_rate() : 0;

	if (!s->freq || max_rate <= 0 || s->freq <= (uint64_t)max_rate)
		return false;
	pr_warn("AUTOPROF_FREQ=%llu is above kernel.perf_event_max_sample_rate; using %d",
		(unsigned long long)s->freq, max_rate);
	s->freq = (uint64_t)max_rate;
	return true;
}

/*
 * Probe the event: opened; where the frequency is above the kernel's limit
 * (EINVAL: the kernel checks it before anything else) it is clamped, where
 * kernel samples are not permitted they are dropped, where the default
 * cycles is missing cpu-clock stands in (each once, said), and the event is
 * probed again: four probes at most. The limit is read only when a probe is
 * refused with EINVAL: a process whose rate is within it (nearly every one)
 * reads no /proc file for it. Returns 0 (a timer-driven event's rate
 * clamped) or the last probe's -errno.
 */
static int probe_event(const struct ap_config *raw, const struct settle_facts *f,
		       struct ap_settled *s)
{
	struct perf_event_attr attr;
	bool event_auto = raw->event_auto, clamped = false;
	int err = 0;

	for (int probes = 0; probes < 4; probes++) {
		perf_event__sampler_attr(s, &attr);
		err = f->probe(&attr);
		if (!err) {
			clamp_timer_rate(s);
			return 0;
		}
		if (err == -EINVAL && !clamped && clamp_to_max_rate(f, s)) {
			clamped = true;
		} else if (s->kernel && (err == -EACCES || err == -EPERM)) {
			pr_warn("AUTOPROF_KERNEL: kernel samples are not permitted here (%s; see "
				"kernel.perf_event_paranoid); sampling user space only",
				strerror(-err));
			s->kernel = false;
		} else if (event_auto && (err == -ENOENT || err == -EOPNOTSUPP || err == -ENODEV)) {
			s->fell_back = -err;
			s->event = (struct ap_event){.type = PERF_TYPE_SOFTWARE,
						     .config = PERF_COUNT_SW_CPU_CLOCK};
			snprintf(s->event_name, sizeof(s->event_name), "cpu-clock");
			event_auto = false;
		} else {
			break;
		}
	}
	return err;
}

/* Is this perf_event_open error a refusal of the whole system call (not of one event)? */
static bool refused(int err)
{
	return err == -EACCES || err == -EPERM || err == -ENOSYS;
}

/*
 * Perf events where they can be had, else (or with AUTOPROF_MODE=timer) the
 * CPU-time timers; one line says when the timers stand in. Returns 0 or
 * -errno, said.
 */
static int choose_source(const struct ap_config *raw, const struct settle_facts *f,
			 struct ap_settled *s)
{
	int err;

	if (raw->mode != AP_MODE_TIMER) {
		err = probe_event(raw, f, s);
		if (!err)
			return 0;
		if (raw->mode == AP_MODE_PERF || !refused(err)) {
			pr_warn("cannot open a %s sampling event: %s; not profiling", s->event_name,
				strerror(-err));
			return err;
		}
		if (f->say_timers)
			pr_warn("perf_event_open is refused here (%s; seccomp or "
				"kernel.perf_event_paranoid): sampling with per-thread CPU-time "
				"timers, at most at the kernel tick rate%s",
				strerror(-err), f->no_counters ? "; no counters" : "");
	}
	s->timer_mode = true;
	snprintf(s->event_name, sizeof(s->event_name), "cpu-clock");
	s->kernel = false;
	if (s->callgraph == AP_CG_FP)
		s->callgraph = AP_CG_LIBUNWIND; /* no kernel chains without perf events */
	return 0;
}

/* The timer source's attr in the file: a user-only cpu-clock at the asked period for now. */
static void timer_attr(const struct ap_settled *s, struct perf_event_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = PERF_TYPE_SOFTWARE;
	attr->config = PERF_COUNT_SW_CPU_CLOCK;
	attr->sample_period = s->interval_ns;
	attr->exclude_kernel = 1;
	attr->exclude_hv = 1;
	attr->use_clockid = 1;
	attr->clockid = CLOCK_MONOTONIC;
}

int settle__config(const struct ap_config *raw, const struct settle_facts *facts,
		   struct ap_settled *out)
{
	int err;

	copy_raw(raw, out);
	settle_output(out, facts->cwd);
	err = choose_source(raw, facts, out);
	if (err)
		return err;
	out->interval_ns = out->period ? out->period : 1000000000ULL / out->freq;
	out->hz = out->period ? 1000000000ULL / out->period : out->freq;
	if (out->timer_mode)
		timer_attr(out, &out->attr);
	else
		perf_event__sampler_attr(out, &out->attr);
	return 0;
}
