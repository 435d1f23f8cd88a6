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
	char path[PATH_MAX];
	int err;

	if (getauxval(AT_SECURE))
		return 0; /* setuid/setgid: stay off, silently, as the loader does */
	if (config__parse(&autoprof.cfg))
		return -EINVAL;
	autoprof.pid = getpid();
	if (expand_output(autoprof.cfg.output, autoprof.pid, path, sizeof(path))) {
		pr_warn("AUTOPROF_OUTPUT='%s' is too long; not profiling", autoprof.cfg.output);
		return -ENAMETOOLONG;
	}
	err = event__probe_default(&autoprof.cfg);
	if (err) {
		pr_warn("cannot open a %s sampling event: %s; not profiling", autoprof.cfg.event_name,
			strerror(-err));
		return err;
	}
	event__sampler_attr(&autoprof.cfg, &autoprof.attr);
	if (autoprof.cfg.callgraph == AP_CG_LIBUNWIND)
		unwind__init();

	err = writer__open(&autoprof.writer, path, &autoprof.attr);
	if (err) {
		pr_warn("cannot create %s: %s; not profiling", path, strerror(-err));
		return err;
	}
	autoprof.start_time = ap_now();
	err = maps__write_all(&autoprof.writer, autoprof.pid);
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
	return err;
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
	err = features__write(&autoprof.writer);
	if (err)
		pr_warn("writing %s failed: %s; the profile is cut short", autoprof.writer.path,
			strerror(-err));
	pr_info("wrote %llu samples of %llu threads (%llu lost, %llu without a full stack) to %s",
		(unsigned long long)autoprof.samples, (unsigned long long)autoprof.threads,
		(unsigned long long)autoprof.lost,
		(unsigned long long)(autoprof.unwind_skipped + autoprof.unwind_short), autoprof.writer.path);
}

