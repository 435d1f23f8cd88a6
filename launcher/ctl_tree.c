/* SPDX-License-Identifier: MIT */
/*
 * ctl_tree.c - `autoprof ctl LAUNCHER_PID start|stop|dump|status` when the
 * launcher runs its command under the library (`autoprof -- CMD &` then
 * `autoprof ctl $! start`: $! is the launcher, not the profiled program).
 *
 * The launcher publishes an endpoint of its own, DIR/LPID
 * (include/autoprof/control.h), marked "launcher 1" and holding no token: it
 * takes no request itself. `autoprof ctl` on that pid acts on every process
 * of the run the library profiles now, the launcher's descendants that
 * publish an endpoint of their own (preload/session/control.c), one after
 * the other, and says each answer; status adds a line of totals. A process
 * forked or exec'd later inherits its parent's state (started or stopped).
 * Started paused, the launcher says on stderr which pid it profiles.
 * Not async-signal-safe.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "autoprof/control.h"
#include "autoprof/env.h"
#include "common.h"
#include "launcher.h"

#define MAX_TREE 4096

static char endpoint[4200];

/* Start time (field 22) and parent (field 4) of /proc/@pid/stat; false if gone. */
static bool stat_of(int pid, unsigned long long *start, int *ppid)
{
	char path[64], buf[1024], *p;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	n = raw_syscall__read_file(path, buf, sizeof(buf) - 1);
	if (n <= 0)
		return false;
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && sscanf(p + 2,
			   "%*c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d "
			   "%*d %*d %llu",
			   ppid, start) == 2;
}

void ctl_tree__publish(pid_t child, const char *output, int quiet)
{
	char dir[4096], text[4600], tmp[4300];
	unsigned long long start = 0;
	const char *v = ap_env(AP_ENV_START);
	int ppid, fd, n, err = ap_control_dir_make(dir, sizeof(dir), getenv("XDG_RUNTIME_DIR"));

	if (v && !strcmp(v, "0") && !quiet)
		fprintf(stderr,
			"autoprof: profiling pid %d, paused until `autoprof ctl %d start` (this "
			"launcher: every process of the run)\n",
			(int)child, (int)getpid());
	if (err || (size_t)snprintf(endpoint, sizeof(endpoint), "%s/%d", dir, (int)getpid()) >=
		       sizeof(endpoint)) {
		endpoint[0] = 0;
		return; /* ctl on the profiled pid still works; the library says its own */
	}
	stat_of(getpid(), &start, &ppid);
	n = snprintf(text, sizeof(text), "%s\npid %d\nstart %llu\nlauncher 1\nchild %d\nfile %s\n",
		     AP_CONTROL_MAGIC, (int)getpid(), start, (int)child, output);
	snprintf(tmp, sizeof(tmp), "%s.tmp", endpoint);
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, text, (size_t)n) != n || close(fd) < 0 || rename(tmp, endpoint)) {
		fprintf(
		    stderr,
		    "autoprof: no control endpoint for the launcher (%s: %s); `autoprof ctl %d` "
		    "reaches the program\n",
		    endpoint, strerror(errno), (int)child);
		if (fd >= 0)
			unlink(tmp);
		endpoint[0] = 0;
	}
}

void ctl_tree__withdraw(void)
{
	if (endpoint[0])
		unlink(endpoint);
	endpoint[0] = 0;
}

/*
 * The descendants of @root, parents before children, into @out (at most
 * @cap); returns how many. One pass over /proc, then a walk of the tree.
 */
static int descendants(int root, int *out, int cap)
{
	static int pid[MAX_TREE * 4], parent[MAX_TREE * 4];
	int n = 0, got = 0;
	struct dirent *d;
	DIR *dir = opendir("/proc");

	while (dir && (d = readdir(dir)) && n < (int)(sizeof(pid) / sizeof(pid[0]))) {
		unsigned long long start;
		int p = atoi(d->d_name);

		if (p > 0 && stat_of(p, &start, &parent[n]))
			pid[n++] = p;
	}
	if (dir)
		closedir(dir);
	/* breadth first: out[0..got) are found; each one's children follow */
	for (int i = -1; i < got && got < cap; i++) {
		int up = i < 0 ? root : out[i];

		for (int j = 0; j < n && got < cap; j++)
			if (parent[j] == up && pid[j] != root)
				out[got++] = pid[j];
	}
	return got;
}

/* Does one of the @n processes @pids publish an endpoint? */
static bool any_endpoint(const int *pids, int n)
{
	for (int i = 0; i < n; i++)
		if (ctl__has_endpoint(pids[i]))
			return true;
	return false;
}

int ctl_tree__request(int launcher, int op, bool timing)
{
	static int tree[MAX_TREE];
	struct ctl_answer sum = {0}, a;
	int n, answered = 0, failed = 0;
	char path[64];
	struct timespec t0, t;

	/* `autoprof -- CMD & autoprof ctl $! OP` at once: the command may not have
	 * loaded the library yet; it is given 2 s */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	snprintf(path, sizeof(path), "/proc/%d", launcher);
	for (;;) {
		n = descendants(launcher, tree, MAX_TREE);
		if (any_endpoint(tree, n) || access(path, F_OK))
			break;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000000000LL + (t.tv_nsec - t0.tv_nsec) > 2000000000LL)
			break;
		nanosleep(&(struct timespec){0, 20000000}, NULL);
	}
	for (int i = 0; i < n; i++) {
		int rc = ctl__one(tree[i], op, timing, true, &a);

		if (rc == CTL_ABSENT)
			continue; /* not profiled (a helper, --follow 0, not started yet) */
		if (rc) {
			failed++;
			continue;
		}
		answered++;
		sum.samples += a.samples;
		sum.lost += a.lost;
		sum.threads += a.threads;
		sum.sampling += a.sampling;
	}
	if (!answered && !failed) {
		fprintf(stderr,
			"autoprof ctl: launcher %d profiles no process now (the program has not "
			"started the library yet, or has ended)\n",
			launcher);
		return 1;
	}
	if (op == AP_CTL_STATUS)
		printf("run of launcher %d: %d profiled process%s (%llu sampling), %llu samples "
		       "(%llu lost) from %llu threads\n",
		       launcher, answered, answered == 1 ? "" : "es", sum.sampling, sum.samples,
		       sum.lost, sum.threads);
	return failed ? 1 : 0;
}
