/* SPDX-License-Identifier: MIT */
/*
 * session.c - the one profiling session of this process: the order in which
 * things start and stop (main.c calls these from the constructor/destructor).
 *
 * Whatever fails, the program runs on unprofiled: one line on stderr says
 * why, and the program's errno, signals, fds and output are left as they were.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

struct ap_session autoprof;

/* CLOCK_MONOTONIC in ns, the clock of every timestamp in the file. Async-signal-safe. */
uint64_t ap_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Expand %p (pid) and %% in pattern into out. Returns 0 or -ENAMETOOLONG. */
static int expand_output(const char *pattern, pid_t pid, char *out, size_t cap)
{
	size_t n = 0;

	for (const char *p = pattern; *p; p++) {
		int w;

		if (p[0] == '%' && p[1] == 'p') {
			w = snprintf(out + n, cap - n, "%d", (int)pid);
			p++;
		} else if (p[0] == '%' && p[1] == '%') {
			w = snprintf(out + n, cap - n, "%%");
			p++;
		} else {
			w = snprintf(out + n, cap - n, "%c", *p);
		}
		if (w < 0 || (size_t)w >= cap - n)
			return -ENAMETOOLONG;
		n += (size_t)w;
	}
	return 0;
}

/*
 * The counters: the launcher's (opened with enable_on_exec, taken over once:
 * the variable is removed so children do not try) or our own, opened now.
 * Returns 0 or -EINVAL (already reported).
 */
static int start_counters(struct ap_counters *cs, const struct ap_config *cfg)
{
	int err;

	if (cfg->counter_fds[0]) {
		err = counters__adopt(cs, cfg->counter_fds);
		unsetenv("AUTOPROF_COUNTER_FDS");
		return err;
	}
	err = counters__parse(cs, cfg->counters);
	if (!err)
		counters__open(cs, false);
	return err;
}

/* One line for what a machine without a PMU cannot do; nothing elsewhere. */
static void say_missing_pmu(const struct ap_counters *cs, int fell_back)
{
	char missing[512];

	counters__unsupported(cs, missing, sizeof(missing));
	if (fell_back && missing[0])
		pr_warn("no hardware PMU here (%s): sampling cpu-clock; not counting %s",
			strerror(fell_back), missing);
	else if (fell_back)
		pr_warn("no hardware cycles event here (%s): sampling cpu-clock",
			strerror(fell_back));
	else if (missing[0])
		pr_warn("not counting %s: the machine lacks them", missing);
}

/* The file's attrs: the sampling event (id 1), then each counter that is open (ids 2, ...). */
static int file_events(struct writer_event *events)
{
	int n = 0;

	events[n].attr = autoprof.attr;
	events[n].id = AP_SAMPLE_ID;
	snprintf(events[n].name, sizeof(events[n].name), "%s", autoprof.cfg.event_name);
	n++;
	for (int i = 0; i < autoprof.counters.n && n < AP_MAX_EVENTS; i++) {
		const struct ap_counter *c = &autoprof.counters.c[i];

		if (c->unsupported)
			continue;
		events[n].attr = c->attr;
		events[n].id = (uint64_t)n + 1;
		snprintf(events[n].name, sizeof(events[n].name), "%s", c->name);
		n++;
	}
	return n;
}

/*
 * A forked child runs unprofiled for now: it must not touch its parent's
 * file or sampler state (its copy of the ring mappings is gone, the fds are
 * shared with the parent).
 */
static void after_fork_in_child(void)
{
	__atomic_store_n(&autoprof.active, false, __ATOMIC_RELEASE);
	ap_self = NULL;
}

/* Sample the threads that started before us (another library's constructor). */
static void attach_other_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	pid_t self = gettid();
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		pid_t tid = (pid_t)atoi(e->d_name);
		int err;

		if (tid <= 0 || tid == self)
			continue;
		err = thread__attach(tid);
		if (err)
			pr_warn("cannot sample thread %d: %s", (int)tid, strerror(-err));
	}
	closedir(d);
}

/*
 * Start profiling this process: options, event, file, handler, then the
 * calling thread's sampler. Returns 0, or -errno after saying why the program
 * runs unprofiled. Not async-signal-safe.
 */
int autoprof__start(void)
{
	struct writer_event events[AP_MAX_EVENTS];
	char path[PATH_MAX];
	int err, fell_back = 0, nr_events;

	if (getauxval(AT_SECURE))
		return 0; /* setuid/setgid: stay off, silently, as the loader does */
	autoprof.start_time = ap_now();
	if (config__parse(&autoprof.cfg))
		return -EINVAL;
	autoprof.pid = getpid();
	if (expand_output(autoprof.cfg.output, autoprof.pid, path, sizeof(path))) {
		pr_warn("AUTOPROF_OUTPUT='%s' is too long; not profiling", autoprof.cfg.output);
		return -ENAMETOOLONG;
	}
	err = start_counters(&autoprof.counters, &autoprof.cfg);
	if (err)
		return err;
	err = event__probe_default(&autoprof.cfg, &fell_back);
	if (err) {
		pr_warn("cannot open a %s sampling event: %s; not profiling", autoprof.cfg.event_name,
			strerror(-err));
		goto out_counters;
	}
	say_missing_pmu(&autoprof.counters, fell_back);
	event__sampler_attr(&autoprof.cfg, &autoprof.attr);
	if (autoprof.cfg.callgraph == AP_CG_LIBUNWIND)
		unwind__init();

	nr_events = file_events(events);
	err = writer__open(&autoprof.writer, path, events, nr_events);
	if (err) {
		pr_warn("cannot create %s: %s; not profiling", path, strerror(-err));
		goto out_counters;
	}
	err = maps__write_all(&autoprof.writer, autoprof.pid);
	if (!err && autoprof.cfg.kernel && maps__write_kernel(&autoprof.writer))
		pr_warn("AUTOPROF_KERNEL: /proc/kallsyms hides kernel addresses "
			"(kernel.kptr_restrict); kernel samples will not resolve to symbols");
	if (err) {
		pr_warn("cannot write %s: %s; not profiling", path, strerror(-err));
		goto out_file;
	}
	err = sample__install(autoprof.cfg.signo);
	if (err) {
		pr_warn("signal %d already has a handler (%s); not profiling (set AUTOPROF_SIGNAL)",
			autoprof.cfg.signo, strerror(-err));
		goto out_file;
	}
	interpose__init();
	pthread_atfork(NULL, NULL, after_fork_in_child);
	autoprof.active = true;
	err = thread__start();
	if (err) {
		autoprof.active = false;
		pr_warn("cannot start sampling %s: %s; not profiling", autoprof.cfg.event_name,
			strerror(-err));
		sample__uninstall();
		goto out_file;
	}
	attach_other_threads();
	pr_info("sampling %s at %llu %s with %s stacks into %s", autoprof.cfg.event_name,
		(unsigned long long)(autoprof.cfg.period ? autoprof.cfg.period : autoprof.cfg.freq),
		autoprof.cfg.period ? "events per sample" : "Hz", config__callgraph_name(autoprof.cfg.callgraph),
		path);
	return 0;

out_file:
	writer__abandon(&autoprof.writer);
	unlink(path);
out_counters:
	for (int i = 0; i < autoprof.counters.n; i++)
		if (autoprof.counters.c[i].fd >= 0)
			close(autoprof.counters.c[i].fd);
	autoprof.counters.n = 0;
	return err;
}

/* Read the counters; store them in the file and, with AUTOPROF_STAT, print them. */
static void finish_counters(void)
{
	struct ap_counters *cs = &autoprof.counters;
	uint64_t elapsed = ap_now() - autoprof.start_time;

	counters__read(cs);
	if (cs->adopted && cs->start_ns && cs->start_ns < ap_now())
		elapsed = ap_now() - cs->start_ns; /* the program's whole life, from its exec */
	stat__write(&autoprof.writer, cs, AP_SAMPLE_ID + 1, elapsed, autoprof.period_sum);
	if (autoprof.cfg.stat)
		stat__print(cs, elapsed);
}

/*
 * Stop the calling thread's sampler and finish the file. Only the process
 * that opened the file writes it. Not async-signal-safe.
 */
void autoprof__stop(void)
{
	int err;

	if (!autoprof.active || getpid() != autoprof.pid)
		return;
	__atomic_store_n(&autoprof.active, false, __ATOMIC_RELEASE);
	thread__stop_all();
	finish_counters();
	err = features__write(&autoprof.writer);
	if (err)
		pr_warn("writing %s failed: %s; the profile is cut short", autoprof.writer.path,
			strerror(-err));
	pr_info("wrote %llu samples of %llu threads (%llu lost, %llu without a full stack) to %s",
		(unsigned long long)autoprof.samples, (unsigned long long)autoprof.threads,
		(unsigned long long)autoprof.lost,
		(unsigned long long)(autoprof.unwind_skipped + autoprof.unwind_short), autoprof.writer.path);
	if (autoprof.unwinds)
		pr_info("unwinding: %.2f us and %.1f frames per sample (%llu samples)",
			(double)autoprof.unwind_ns / 1e3 / (double)autoprof.unwinds,
			(double)autoprof.frames / (double)autoprof.samples,
			(unsigned long long)autoprof.unwinds);
}

