/* SPDX-License-Identifier: MIT */
/*
 * exec_watch.c - in the library's mode, the static programs the command's
 * process tree runs: the library cannot enter them (no dynamic loader reads
 * LD_PRELOAD), so their time is missing from the profile; the closing lines
 * say which ran (each exec also gets the library's own line at run time,
 * preload/wrap/exec_note.c).
 *
 * The launcher opens one dummy event per CPU on the command before its exec
 * (inherit=1, enable_on_exec: every process of the tree has it, however it
 * is made), sampling nothing: its rings carry only the COMM record of each
 * exec and the MMAP2 records of executable mappings. The first executable
 * mapping of a process after its exec is the program itself (the kernel maps
 * it before its interpreter); the launcher reads its program headers
 * (common/elf_interp.c). Anything that fails (no perf events here, a ring
 * that fills) leaves the run as it is, without this note.
 *
 * The same events' FORK and EXIT records (attr.task) keep the tree's
 * processes: when the command ends, those still running, the library not
 * yet started in some (a fork not yet exec'd, a constructor not yet run),
 * are the ones whose files come after the merge (onefile_live.c).
 * Not async-signal-safe.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "autoprof/perf_file.h"
#include "common.h"
#include "handler/handler.h"
#include "launcher.h"

#define MAX_CPUS 1024
/* 16 KiB per CPU: side-band records only (an exec and its maps: about 1.5 KiB),
 * small since it counts in the user's perf_event_mlock_kb with the library's rings. */
#define RING_PAGES 4
#define PENDING	   64 /* processes between their exec and their program's mapping */
#define NAMES	   8  /* static programs named in the closing line */

static struct ring rings[MAX_CPUS];
static struct pollfd pfd[MAX_CPUS];
static int nr;
static uint32_t pending[PENDING]; /* pids that exec'd, their program not seen yet */
static char *names[NAMES];
static unsigned runs[NAMES];
static unsigned nr_names, static_runs;

/* The tree's processes from FORK and EXIT records; static: its last exec
 * was of a static program, so it never runs the library (its forks may exec). */
struct tree_proc {
	uint32_t pid;
	bool is_static;
};
static struct tree_proc *tree;
static size_t nr_tree, cap_tree;
static bool tree_unknown; /* a record lost, or no room: the tree is not known */
/* EXITs read before their FORK: the rings are drained one CPU after the
 * other, and a process's records lie on the rings of the CPUs it ran on. */
#define GONE 256
static uint32_t gone[GONE];
static unsigned nr_gone, next_gone;

/* The tree's entry for @pid, or NULL. */
static struct tree_proc *tree_find(uint32_t pid)
{
	for (size_t i = 0; i < nr_tree; i++)
		if (tree[i].pid == pid)
			return &tree[i];
	return NULL;
}

/* A process @pid joins the tree, unless its end was read first. */
static void tree_fork(uint32_t pid)
{
	for (unsigned i = 0; i < nr_gone; i++)
		if (gone[i] == pid) {
			gone[i] = gone[--nr_gone];
			next_gone = nr_gone;
			return;
		}
	if (tree_find(pid))
		return;
	if (nr_tree == cap_tree) {
		struct tree_proc *more = realloc(tree, (cap_tree * 2 + 64) * sizeof(*tree));

		if (!more) {
			tree_unknown = true;
			return;
		}
		tree = more;
		cap_tree = cap_tree * 2 + 64;
	}
	tree[nr_tree++] = (struct tree_proc){pid, false};
}

/* Process @pid ended. */
static void tree_exit(uint32_t pid)
{
	struct tree_proc *p = tree_find(pid);

	if (p) {
		*p = tree[--nr_tree];
		return;
	}
	gone[next_gone] = pid; /* its FORK comes later (full: the oldest goes) */
	next_gone = (next_gone + 1) % GONE;
	if (nr_gone < GONE)
		nr_gone++;
}

int exec_watch__start(pid_t child)
{
	struct perf_event_attr a;
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	a.sample_period = 1;
	a.disabled = 1;
	a.enable_on_exec = 1;
	a.inherit = 1;
	a.comm = 1;
	a.comm_exec = 1;
	a.task = 1; /* FORK and EXIT: the tree's processes */
	a.mmap = 1; /* executable mappings only (no mmap_data) */
	a.mmap2 = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.watermark = 1;
	a.wakeup_watermark = RING_PAGES * 4096 / 4;
	for (int cpu = 0; cpu < ncpu && cpu < MAX_CPUS; cpu++) {
		long fd = syscall(SYS_perf_event_open, &a, child, cpu, -1, PERF_FLAG_FD_CLOEXEC);

		if (fd < 0 && errno == ENODEV)
			continue; /* an offline CPU */
		if (fd < 0 || ring__map(&rings[nr], (int)fd, RING_PAGES)) {
			if (fd >= 0)
				close((int)fd);
			exec_watch__end();
			return -1;
		}
		pfd[nr++] = (struct pollfd){.fd = (int)fd, .events = POLLIN};
	}
	return 0;
}

/* Note one run of the static program @path. */
static void note_static(const char *path)
{
	static_runs++;
	for (unsigned i = 0; i < nr_names; i++)
		if (!strcmp(names[i], path)) {
			runs[i]++;
			return;
		}
	if (nr_names < NAMES && (names[nr_names] = strdup(path)))
		runs[nr_names++] = 1;
}

/*
 * ring__drain's callback: an exec (COMM), then its program's first
 * executable mapping; a process made (FORK: pid, ppid, tid) or ended (EXIT).
 */
static void take(void *ctx, const struct perf_event_header *h, bool last)
{
	uint32_t ids[3]; /* pid, ppid, tid */

	(void)ctx;
	(void)last;
	if ((h->type == PERF_RECORD_FORK || h->type == PERF_RECORD_EXIT) && h->size >= 20) {
		memcpy(ids, (const char *)h + 8, sizeof(ids));
		if (ids[0] != ids[2])
			return; /* a thread */
		if (h->type == PERF_RECORD_FORK)
			tree_fork(ids[0]);
		else
			tree_exit(ids[0]);
	} else if (h->type == PERF_RECORD_LOST) {
		tree_unknown = true;
	} else if (h->type == PERF_RECORD_COMM && (h->misc & PERF_RECORD_MISC_COMM_EXEC) &&
		   h->size >= 16) {
		uint32_t pid;
		struct tree_proc *p;

		memcpy(&pid, (const char *)h + 8, 4);
		if ((p = tree_find(pid)))
			p->is_static = false; /* until its new program is seen */
		for (int i = 0; i < PENDING; i++)
			if (!pending[i] || pending[i] == pid) {
				pending[i] = pid;
				return;
			}
	} else if (h->type == PERF_RECORD_MMAP2 && h->size > sizeof(struct perf_record_mmap2)) {
		const struct perf_record_mmap2 *m = (const void *)h;
		char path[4096];

		for (int i = 0; i < PENDING; i++) {
			if (pending[i] != m->pid)
				continue;
			pending[i] = 0;
			snprintf(path, sizeof(path), "%.*s",
				 (int)strnlen(m->filename, h->size - sizeof(*m)), m->filename);
			if (elf_interp__static_program(path)) {
				struct tree_proc *p = tree_find(m->pid);

				note_static(path);
				if (p)
					p->is_static = true;
			}
			return;
		}
	}
}

/* Drain every ring once. */
static void drain(void)
{
	char wrap[8192];

	for (int i = 0; i < nr; i++)
		ring__drain(&rings[i], wrap, sizeof(wrap), take, NULL);
}

/*
 * Did the events hang up? The kernel says POLLHUP once the command is
 * exiting and no process of its tree holds an inherited copy: no record
 * comes any more, and polling again returns at once until the command can
 * be waited for (a spin, long under a tracer that stops it at its exit).
 */
static bool hung_up(void)
{
	for (int i = 0; i < nr; i++)
		if (pfd[i].revents & POLLHUP)
			return true;
	return false;
}

static void on_child(int sig)
{
	(void)sig; /* only to cut ppoll short */
}

pid_t exec_watch__wait(pid_t child, int *status)
{
	struct sigaction sa, old_sa;
	struct timespec second = {1, 0};
	sigset_t chld, old;
	pid_t got;

	if (!nr) {
		while ((got = waitpid(child, status, 0)) < 0 && errno == EINTR)
			;
		return got;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_child;
	sigemptyset(&sa.sa_mask);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &old);
	sigaction(SIGCHLD, &sa, &old_sa);
	/* SIGCHLD is blocked but in ppoll: its end cannot slip between the two calls. */
	while ((got = waitpid(child, status, WNOHANG)) == 0 || (got < 0 && errno == EINTR)) {
		if (ppoll(pfd, (nfds_t)nr, &second, &old) > 0 && hung_up()) {
			while ((got = waitpid(child, status, 0)) < 0 && errno == EINTR)
				;
			break;
		}
		drain();
	}
	drain(); /* the records up to the command's end */
	sigaction(SIGCHLD, &old_sa, NULL);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return got;
}

size_t exec_watch__tree(uint32_t *pids, size_t cap)
{
	size_t n = 0;

	if (nr)
		drain();
	if (!nr || tree_unknown)
		return (size_t)-1;
	for (size_t i = 0; i < nr_tree && n < cap; i++)
		if (!tree[i].is_static)
			pids[n++] = tree[i].pid;
	return n;
}

void exec_watch__end(void)
{
	for (int i = 0; i < nr; i++) {
		ring__unmap(&rings[i]);
		close(pfd[i].fd);
	}
	nr = 0;
	free(tree);
	tree = NULL;
	nr_tree = cap_tree = 0;
	nr_gone = next_gone = 0;
}

void exec_watch__say(void)
{
	char list[1024] = "";
	size_t n = 0;

	drain();
	exec_watch__end();
	if (!static_runs)
		return;
	for (unsigned i = 0; i < nr_names && n + 1 < sizeof(list); i++) {
		n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s", i ? ", " : "", names[i]);
		if (runs[i] > 1 && n + 1 < sizeof(list))
			n += (size_t)snprintf(list + n, sizeof(list) - n, " (%u times)", runs[i]);
		free(names[i]);
	}
	if (n >= sizeof(list))
		n = sizeof(list) - 1;
	fprintf(stderr,
		"autoprof: not profiled: %u run%s of static programs the library cannot enter "
		"(%s%s); `autoprof --outside -- CMD` profiles the whole tree\n",
		static_runs, static_runs == 1 ? "" : "s", list,
		static_runs > nr_names && nr_names == NAMES ? ", ..." : "");
}
