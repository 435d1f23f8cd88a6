/* SPDX-License-Identifier: MIT */
/*
 * outside_events.c - the events of an outside run (outside.h): the plan's
 * sampling event and its tracking event opened on each target on every CPU,
 * the first on a CPU owning the CPU's ring and the others writing into it,
 * and the one line a refused open gets. Not async-signal-safe.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common.h"
#include "outside.h"

static long event_open(struct perf_event_attr *a, pid_t pid, int cpu, int group)
{
	return syscall(SYS_perf_event_open, a, pid, cpu, group, PERF_FLAG_FD_CLOEXEC);
}

static int read_int(const char *path)
{
	char buf[32];

	return raw_syscall__read_file(path, buf, sizeof(buf)) > 0 ? atoi(buf) : -1;
}

/* One line saying what opening sampling events on another process needs. */
void outside_events__say_denied(int err, const char *what)
{
	int paranoid = read_int("/proc/sys/kernel/perf_event_paranoid");
	int scope = read_int("/proc/sys/kernel/yama/ptrace_scope");
	char yama[160] = "";

	if (scope > 0)
		snprintf(yama, sizeof(yama),
			 "; kernel.yama.ptrace_scope is %d: a process not your child needs 0 or "
			 "CAP_SYS_PTRACE",
			 scope);
	fprintf(stderr,
		"autoprof: cannot open perf events on %s: %s (kernel.perf_event_paranoid is %d: "
		"2 or less samples what you may ptrace, above needs CAP_PERFMON; another "
		"user's process needs CAP_SYS_PTRACE%s)\n",
		what, strerror(err), paranoid, yama);
}

/* Keep event @fd of CPU @cpu (its ring that CPU's, its id the file's). 0 or -errno. */
static int keep_fd(struct outside_events *ev, long fd, int cpu, bool sampling)
{
	if (ev->nr == ev->cap) {
		int cap = ev->cap ? ev->cap * 2 : 64;
		int *v = realloc(ev->fd, (size_t)cap * sizeof(*v));
		uint64_t *ids = realloc(ev->ids, (size_t)cap * sizeof(*ids));
		bool *smp = realloc(ev->sampling, (size_t)cap * sizeof(*smp));
		int *cpus = realloc(ev->cpu, (size_t)cap * sizeof(*cpus));

		if (v)
			ev->fd = v;
		if (ids)
			ev->ids = ids;
		if (smp)
			ev->sampling = smp;
		if (cpus)
			ev->cpu = cpus;
		if (!v || !ids || !smp || !cpus) {
			close((int)fd);
			return -ENOMEM;
		}
		ev->cap = cap;
	}
	if (ioctl((int)fd, PERF_EVENT_IOC_ID, &ev->ids[ev->nr]) < 0)
		ev->ids[ev->nr] = 0;
	if (ev->ring_fd[cpu] < 0)
		ev->ring_fd[cpu] = (int)fd;
	else if (ev->mapped && ioctl((int)fd, PERF_EVENT_IOC_SET_OUTPUT, ev->ring_fd[cpu]) < 0) {
		int err = -errno;

		close((int)fd);
		return err;
	}
	ev->cpu[ev->nr] = cpu;
	ev->sampling[ev->nr] = sampling;
	ev->fd[ev->nr++] = (int)fd;
	return 0;
}

/* Open the plan's event on @pid on every CPU, and its tracking event. Returns 0, or -errno (not
 * said). */
int outside_events__add(struct outside_events *ev, const struct outside_plan *p, pid_t pid)
{
	for (int cpu = 0; cpu < ev->ncpu; cpu++) {
		struct perf_event_attr attr = p->attr, track = p->track;
		long fd = event_open(&attr, pid, cpu, -1);
		int err;

		if (fd < 0 && errno == ENODEV)
			continue; /* an offline CPU */
		if (fd < 0)
			return -errno;
		err = keep_fd(ev, fd, cpu, true);
		if (err)
			return err;
		fd = event_open(&track, pid, cpu, -1);
		if (fd < 0)
			return -errno;
		err = keep_fd(ev, fd, cpu, false);
		if (err)
			return err;
	}
	return 0;
}

int outside_events__redirect(struct outside_events *ev)
{
	ev->mapped = true;
	for (int i = 0; i < ev->nr; i++)
		if (ev->fd[i] != ev->ring_fd[ev->cpu[i]] &&
		    ioctl(ev->fd[i], PERF_EVENT_IOC_SET_OUTPUT, ev->ring_fd[ev->cpu[i]]) < 0)
			return -errno;
	return 0;
}

int outside_events__enable(struct outside_events *ev, bool on)
{
	int err = 0;

	for (int i = 0; i < ev->nr; i++)
		if (ev->sampling[i] &&
		    ioctl(ev->fd[i], on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0) < 0)
			err = -errno;
	return err;
}

int outside_events__init(struct outside_events *ev)
{
	memset(ev, 0, sizeof(*ev));
	ev->ncpu = (int)sysconf(_SC_NPROCESSORS_CONF);
	if (ev->ncpu < 1 || ev->ncpu > OUTSIDE_MAX_CPUS)
		ev->ncpu = ev->ncpu < 1 ? 1 : OUTSIDE_MAX_CPUS;
	ev->ring_fd = malloc((size_t)ev->ncpu * sizeof(int));
	if (!ev->ring_fd)
		return -ENOMEM;
	for (int i = 0; i < ev->ncpu; i++)
		ev->ring_fd[i] = -1;
	return 0;
}

void outside_events__close(struct outside_events *ev)
{
	for (int i = 0; i < ev->nr; i++)
		close(ev->fd[i]);
	free(ev->fd);
	free(ev->ids);
	free(ev->sampling);
	free(ev->cpu);
	free(ev->ring_fd);
}
