/* SPDX-License-Identifier: MIT */
/*
 * counting.c - inherited counting events: exact totals for the process, its
 * threads and its children (task-clock, context switches, page faults, and
 * cycles, instructions, branches and cache events where the PMU has them).
 *
 * Names are anything events__parse() takes (perf's names, cache events,
 * the PMU's own names through libpfm4). Counters written {a,b} in the list
 * form a group: the kernel schedules them together, so their ratio is of the
 * same stretch of time even when the PMU multiplexes. Each is still read on
 * its own (PERF_FORMAT_GROUP reads are refused with inherit), with
 * TOTAL_TIME_ENABLED/RUNNING so multiplexed values can be scaled. The
 * launcher opens them with enable_on_exec before it execs the target, so
 * counting starts at the target's first instruction, and hands the fds over
 * in AUTOPROF_COUNTER_FDS; without the launcher the constructor opens them.
 *
 * Context switches and page faults (the plain names, no modifier) of the
 * calling process are read from getrusage instead: the same per-task counts
 * of the kernel, of every thread, live or ended, and of the children the
 * process has waited for. A software perf event of those kinds costs each
 * profiled process two kernel code patches (the first event of a kind
 * system-wide turns a static key on, with an IPI to every CPU; the last
 * turns it off): 125 us an open and close here, a third of the library's
 * start-up. The differences: a child still running at the end is not in
 * them, and a paused stretch is left out of the process's own counts only
 * (a child's come whole when it is waited for).
 * Linked into both the library and the launcher. Not async-signal-safe.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

/*
 * True when this process may not count kernel work (perf_event_paranoid >= 2,
 * not root). Read once: it was read for every counter, 20 opens of the file
 * in each profiled process's start-up.
 */
static bool user_only(void)
{
	static int known = -1;
	char buf[16];

	if (known < 0)
		known = raw_syscall__read_file("/proc/sys/kernel/perf_event_paranoid", buf,
					       sizeof(buf)) <= 0 ||
			(atoi(buf) >= 2 && geteuid() != 0);
	return known;
}

enum { AP_USAGE_NONE, AP_USAGE_CS, AP_USAGE_FAULTS, AP_USAGE_MINFLT, AP_USAGE_MAJFLT };

/* The getrusage kind that counts @ev, or AP_USAGE_NONE: a perf event must. */
static uint8_t usage_kind(const struct ap_event *ev)
{
	if (ev->type != PERF_TYPE_SOFTWARE || ev->levels || ev->precise)
		return AP_USAGE_NONE;
	switch (ev->config) {
	case PERF_COUNT_SW_CONTEXT_SWITCHES:
		return AP_USAGE_CS;
	case PERF_COUNT_SW_PAGE_FAULTS:
		return AP_USAGE_FAULTS;
	case PERF_COUNT_SW_PAGE_FAULTS_MIN:
		return AP_USAGE_MINFLT;
	case PERF_COUNT_SW_PAGE_FAULTS_MAJ:
		return AP_USAGE_MAJFLT;
	}
	return AP_USAGE_NONE;
}

/* One getrusage count of @ru. */
static uint64_t usage_of(const struct rusage *ru, uint8_t kind)
{
	switch (kind) {
	case AP_USAGE_CS:
		return (uint64_t)ru->ru_nvcsw + (uint64_t)ru->ru_nivcsw;
	case AP_USAGE_FAULTS:
		return (uint64_t)ru->ru_minflt + (uint64_t)ru->ru_majflt;
	case AP_USAGE_MINFLT:
		return (uint64_t)ru->ru_minflt;
	case AP_USAGE_MAJFLT:
		return (uint64_t)ru->ru_majflt;
	}
	return 0;
}

/*
 * getrusage's counts, read once per pass over the counters (usage_count):
 * the process's threads and the children it has waited for.
 */
struct usage {
	bool read;
	struct rusage self, children;
};

/* The count of @kind in @u, read at the first call. Async-signal-safe (two system calls). */
static uint64_t usage_count(struct usage *u, uint8_t kind)
{
	if (!u->read) {
		memset(&u->self, 0, sizeof(u->self));
		memset(&u->children, 0, sizeof(u->children));
		raw_syscall(SYS_getrusage, RUSAGE_SELF, &u->self);
		raw_syscall(SYS_getrusage, RUSAGE_CHILDREN, &u->children);
		u->read = true;
	}
	return usage_of(&u->self, kind) + usage_of(&u->children, kind);
}

/* Start (or hand on) @c's getrusage count from @u; held from now when @paused. */
static void usage_start(struct ap_counter *c, struct usage *u, bool paused)
{
	c->base = usage_count(u, c->usage);
	c->usage_on = true;
	c->held_on = paused;
	c->held = c->base;
}

/* The counting attr for @ev (the group leader's attr when enable_on_exec). */
void counting__attr(struct perf_event_attr *attr, const struct ap_event *ev, bool enable_on_exec)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	attr->inherit = 1;
	attr->exclude_kernel = user_only();
	attr->exclude_hv = 1;
	attr->disabled = enable_on_exec;
	attr->enable_on_exec = enable_on_exec;
	events__apply(ev, attr);
	if (attr->exclude_kernel == 0 && user_only())
		attr->exclude_kernel = 1; /* :k asked, but the kernel would refuse */
	attr->precise_ip = 0;		  /* counting: no skid to remove */
}

/* Add one name (@len bytes at @p) to @cs. Returns 0 or -EINVAL after saying why. */
static int add_counter(struct ap_counters *cs, const char *p, size_t len, int leader)
{
	struct ap_counter *c;
	char why[256];

	if (cs->n == AP_MAX_COUNTERS) {
		pr_warn("AUTOPROF_COUNTERS: more than %d counters; not profiling", AP_MAX_COUNTERS);
		return -EINVAL;
	}
	c = &cs->c[cs->n];
	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->leader = leader < 0 ? cs->n : leader;
	if (!len || len >= sizeof(c->name)) {
		pr_warn("AUTOPROF_COUNTERS: '%.*s' is not an event name; not profiling", (int)len,
			p);
		return -EINVAL;
	}
	memcpy(c->name, p, len);
	c->name[len] = 0;
	if (events__parse(c->name, &c->ev, why, sizeof(why))) {
		pr_warn("AUTOPROF_COUNTERS: '%s': %s; not profiling", c->name, why);
		return -EINVAL;
	}
	c->usage = usage_kind(&c->ev);
	cs->n++;
	return 0;
}

/*
 * Split a comma-separated list of event names into cs; {a,b,...} makes a
 * group. Returns 0 or -EINVAL after saying which name is wrong.
 */
int counting__parse(struct ap_counters *cs, const char *list)
{
	const char *p = list;
	int leader = -1;

	cs->n = 0;
	if (!strcmp(list, "none") || !*list)
		return 0;
	while (*p) {
		size_t len;
		bool open_group = *p == '{', close_group;

		if (open_group) {
			if (leader >= 0)
				goto nested;
			p++;
			leader = cs->n;
		}
		len = strcspn(p, ",{}");
		if (p[len] == '{')
			goto nested;
		close_group = p[len] == '}';
		if (close_group && leader < 0)
			goto nested;
		if (add_counter(cs, p, len, leader))
			return -EINVAL;
		p += len;
		if (close_group) {
			leader = -1;
			p++;
		}
		if (*p == ',')
			p++;
		else if (*p)
			goto nested;
	}
	if (leader < 0)
		return 0;
nested:
	pr_warn("AUTOPROF_COUNTERS='%s': groups are {a,b,...}, not nested or unclosed; not "
		"profiling",
		list);
	return -EINVAL;
}

/*
 * Open every parsed counter for process @pid (0: the calling one; inherit=1;
 * its context switches and page faults are counted from getrusage from now,
 * or from the exec with @enable_on_exec: the exec follows at once).
 * A counter the machine lacks (ENOENT/EOPNOTSUPP: no PMU) is marked
 * unsupported, not an error. Returns how many are open.
 */
static int open_for(struct ap_counters *cs, pid_t pid, bool enable_on_exec, bool cloexec)
{
	int open_count = 0;
	unsigned long flags = cloexec ? PERF_FLAG_FD_CLOEXEC : 0;
	struct usage u = {.read = false};

	for (int i = 0; i < cs->n; i++) {
		struct ap_counter *c = &cs->c[i];
		int fd;
		int group_fd = c->leader != i ? cs->c[c->leader].fd : -1;

		/* A group's siblings follow their leader's enable_on_exec (as perf stat). */
		counting__attr(&c->attr, &c->ev, enable_on_exec && group_fd < 0);
		c->attr.disabled |= cs->paused;
		if (c->usage && pid == 0) {
			usage_start(c, &u, cs->paused);
			open_count++;
			continue;
		}
		c->usage = AP_USAGE_NONE;
		fd = (int)raw_syscall(SYS_perf_event_open, &c->attr, pid, -1, group_fd, flags);
		if (fd < 0 && group_fd >= 0) { /* the group does not fit: count it alone */
			counting__attr(&c->attr, &c->ev, enable_on_exec);
			c->attr.disabled |= cs->paused;
			fd = (int)raw_syscall(SYS_perf_event_open, &c->attr, pid, -1, -1, flags);
		}
		if (fd < 0) {
			c->fd = -1;
			c->unsupported = true;
			c->err = errno;
			continue;
		}
		c->fd = fdtab__move_high(fd, cloexec);
		open_count++;
	}
	return open_count;
}

int counting__open(struct ap_counters *cs, bool enable_on_exec)
{
	return open_for(cs, 0, enable_on_exec, !enable_on_exec);
}

int counting__open_task(struct ap_counters *cs, pid_t pid, bool enable_on_exec)
{
	return open_for(cs, pid, enable_on_exec, true);
}

/*
 * Take over the counters the launcher opened: "start:NS,name:fd,name:-,..."
 * ('-' for one the machine lacks, "=BASE[/HELD]" for a getrusage count; NS
 * the CLOCK_MONOTONIC time of the exec). Each fd must be a perf event; it
 * becomes close-on-exec. Returns 0 or -EINVAL after saying what is wrong.
 */
int counting__adopt(struct ap_counters *cs, const char *spec)
{
	const char *p = spec;

	cs->n = 0;
	while (*p && cs->n < AP_MAX_COUNTERS) {
		struct ap_counter *c = &cs->c[cs->n];
		size_t len = strcspn(p, ",");
		/* "name:fd": the last colon, since PMU names hold colons (EVENT:UMASK). */
		const char *colon = memrchr(p, ':', len);
		char link[64], target[64] = "", why[256];
		ssize_t tn;

		memset(c, 0, sizeof(*c));
		c->fd = -1;
		c->leader = cs->n;
		if (!colon || (size_t)(colon - p) >= sizeof(c->name))
			goto bad;
		if (!strncmp(p, "start:", 6)) { /* CLOCK_MONOTONIC ns just before the exec */
			cs->start_ns = strtoull(p + 6, NULL, 10);
			p += len + (p[len] == ',');
			continue;
		}
		memcpy(c->name, p, (size_t)(colon - p));
		if (events__parse(c->name, &c->ev, why, sizeof(why)))
			goto bad;
		counting__attr(&c->attr, &c->ev, false);
		if (colon[1] == '=') { /* getrusage: "=BASE" or "=BASE/HELD" (paused) */
			char *end;

			c->usage = usage_kind(&c->ev);
			c->base = strtoull(colon + 2, &end, 10);
			c->held_on = *end == '/';
			c->held = c->held_on ? strtoull(end + 1, &end, 10) : c->base;
			if (!c->usage || end == colon + 2 || (*end && *end != ','))
				goto bad;
			c->usage_on = true;
		} else if (colon[1] == '-') {
			c->unsupported = true;
			c->err = ENOENT;
		} else {
			char *end;
			long fd = strtol(colon + 1, &end, 10);

			if (end == colon + 1 || (*end && *end != ',') || fd < 0 || fd > INT32_MAX)
				goto bad;
			snprintf(link, sizeof(link), "/proc/self/fd/%ld", fd);
			tn = readlink(link, target, sizeof(target) - 1);
			if (tn <= 0 || (target[tn] = 0, strcmp(target, "anon_inode:[perf_event]")))
				goto bad;
			c->fd = fdtab__own((int)fd);
			fcntl(c->fd, F_SETFD, FD_CLOEXEC);
		}
		cs->n++;
		p += len;
		if (*p == ',')
			p++;
	}
	cs->adopted = true;
	return 0;
bad:
	pr_warn("AUTOPROF_COUNTER_FDS='%s' does not name open perf counters; not counting", spec);
	for (int i = 0; i < cs->n; i++)
		if (cs->c[i].fd >= 0)
			fdtab__close(cs->c[i].fd);
	cs->n = 0;
	return -EINVAL;
}

/* The names of the counters the machine lacks, comma-separated, into buf. */
void counting__unsupported(const struct ap_counters *cs, char *buf, size_t cap)
{
	size_t n = 0;

	buf[0] = 0;
	for (int i = 0; i < cs->n && n < cap; i++)
		if (cs->c[i].unsupported)
			n += (size_t)snprintf(buf + n, cap - n, "%s%s", n ? ", " : "",
					      cs->c[i].name);
}

/* Read every open counter's value (scaled when it was multiplexed); close them if asked. */
void counting__read(struct ap_counters *cs, bool close_them)
{
	struct usage u = {.read = false};
	uint64_t t = 0; /* CLOCK_MONOTONIC ns, read once for the getrusage counts */

	for (int i = 0; i < cs->n; i++) {
		struct ap_counter *c = &cs->c[i];
		uint64_t v[3];

		if (c->usage_on) {
			uint64_t now = c->held_on ? c->held : usage_count(&u, c->usage);

			if (!t) {
				struct timespec ts;

				clock_gettime(CLOCK_MONOTONIC, &ts);
				t = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
			}
			c->raw = c->value = now > c->base ? now - c->base : 0;
			/* never scaled: enabled = running, the time since the start */
			c->ena = c->run = cs->start_ns && t > cs->start_ns ? t - cs->start_ns : 1;
			c->valid = true;
			if (close_them)
				c->usage_on = false;
			continue;
		}
		if (c->fd < 0)
			continue;
		if (read(c->fd, v, sizeof(v)) == (ssize_t)sizeof(v)) {
			c->raw = v[0];
			c->ena = v[1];
			c->run = v[2];
			c->value =
			    c->run && c->run < c->ena
				? (uint64_t)((double)c->raw * (double)c->ena / (double)c->run)
				: c->raw;
			c->valid = true;
		}
		if (close_them) {
			fdtab__close(c->fd);
			c->fd = -1;
		}
	}
}

/*
 * Let every open counter count (on) or not (!on): sampling started or stopped
 * (`autoprof ctl`, AUTOPROF_START=0). The kernel applies the ioctl to the
 * events inherited from the counter too: the whole tree below the process
 * that opened or adopted them. Async-signal-safe (system calls only).
 */
void counting__set_enabled(struct ap_counters *cs, bool on)
{
	struct usage u = {.read = false};

	for (int i = 0; i < cs->n; i++) {
		struct ap_counter *c = &cs->c[i];

		if (c->usage_on && on && c->held_on) { /* the usage while paused is not counted */
			uint64_t now = usage_count(&u, c->usage);

			c->base += now > c->held ? now - c->held : 0;
			c->held_on = false;
		} else if (c->usage_on && !on && !c->held_on) {
			c->held = usage_count(&u, c->usage);
			c->held_on = true;
		}
	}
	for (int i = 0; i < cs->n; i++)
		if (cs->c[i].fd >= 0)
			raw_syscall(SYS_ioctl, cs->c[i].fd,
				    on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0);
}

/* Close every counter and forget them (a forked child's are its parent's). */
void counting__close(struct ap_counters *cs)
{
	for (int i = 0; i < cs->n; i++)
		if (cs->c[i].fd >= 0)
			fdtab__close(cs->c[i].fd);
	cs->n = 0;
}

/* Let the open counters survive an exec (keep) or close with it again (!keep). */
void counting__keep_across_exec(struct ap_counters *cs, bool keep)
{
	for (int i = 0; i < cs->n; i++)
		if (cs->c[i].fd >= 0)
			fcntl(cs->c[i].fd, F_SETFD, keep ? 0 : FD_CLOEXEC);
}

/*
 * The AUTOPROF_COUNTER_FDS value that hands these counters to the next image:
 * "start:NS,name:fd,name:-,name:=BASE[/HELD],...", NS being @start_ns (when they started, moved
 * on by the time sampling was paused). Returns 0, or -ENOSPC when it does not fit.
 */
int counting__spec(const struct ap_counters *cs, uint64_t start_ns, char *buf, size_t cap)
{
	size_t n = (size_t)snprintf(buf, cap, "start:%llu", (unsigned long long)start_ns);

	for (int i = 0; i < cs->n && n < cap; i++) {
		const struct ap_counter *c = &cs->c[i];

		if (c->usage_on && c->held_on)
			n += (size_t)snprintf(buf + n, cap - n, ",%s:=%llu/%llu", c->name,
					      (unsigned long long)c->base,
					      (unsigned long long)c->held);
		else if (c->usage_on)
			n += (size_t)snprintf(buf + n, cap - n, ",%s:=%llu", c->name,
					      (unsigned long long)c->base);
		else if (c->fd >= 0)
			n += (size_t)snprintf(buf + n, cap - n, ",%s:%d", c->name, c->fd);
		else
			n += (size_t)snprintf(buf + n, cap - n, ",%s:-", c->name);
	}
	return n < cap ? 0 : -ENOSPC;
}
