/* SPDX-License-Identifier: MIT */
/*
 * onefile_live.c - the run's processes that outlive the command before
 * their first flush. A descendant's file is made at its first flush (one
 * that never samples makes none: preload/session/lifecycle.c), so a process
 * of the run still running when the command ends may have no file yet. Its
 * control endpoint (preload/session/control.c), written at its start, names
 * the file it will write: the endpoints of live processes started since the
 * launcher that name a descendant's file of this run (OUTPUT.PID or
 * OUTPUT.PID.N in OUTPUT's folder) not there yet are the ones counted here.
 * A process of the tree that has no endpoint yet (forked but not exec'd, or
 * its library's constructor not run: the exec watch knows the tree,
 * exec_watch.c) is waited for a little, then counted as not started.
 * Not async-signal-safe.
 */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "autoprof/control.h"
#include "launcher.h"
#include "onefile.h"

/* Is @name BASE.PID or BASE.PID.N (a descendant's file)? */
static bool descendant_name(const char *name, const char *base)
{
	size_t blen = strlen(base), d;

	if (strncmp(name, base, blen) || name[blen] != '.')
		return false;
	name += blen + 1;
	d = strspn(name, "0123456789");
	if (!d)
		return false;
	if (!name[d])
		return true;
	return name[d] == '.' && strspn(name + d + 1, "0123456789") == strlen(name + d + 1) &&
	       name[d + 1];
}

/* Does the endpoint text @text name a descendant's file in the folder @want not written yet? */
static bool names_unwritten(const char *text, const struct stat *want, const char *base)
{
	char file[PATH_MAX], folder[PATH_MAX], skip[8];
	const char *slash;
	struct stat st;

	if (!textfile__field(text, "file", file, sizeof(file)) || !*file ||
	    textfile__field(text, "launcher", skip, sizeof(skip)))
		return false;
	slash = strrchr(file, '/');
	snprintf(folder, sizeof(folder), "%.*s",
		 slash ? (slash == file ? 1 : (int)(slash - file)) : 1, slash ? file : ".");
	return descendant_name(slash ? slash + 1 : file, base) && stat(folder, &st) == 0 &&
	       st.st_dev == want->st_dev && st.st_ino == want->st_ino && access(file, F_OK) != 0;
}

#define TREE_MAX	   4096
#define START_WAIT_MS	   250 /* for a process of the tree to start the library */
#define START_WAIT_STEP_MS 10

/* Keep in @pids (@n of them) the processes that run with no endpoint in @cdir and no file. */
static size_t without_endpoint(const char *cdir, uint32_t *pids, size_t n,
			       bool (*has_file)(int pid))
{
	char path[PATH_MAX + 32];
	size_t kept = 0;

	for (size_t i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%u", cdir, pids[i]);
		if (onefile__alive((int)pids[i]) && access(path, F_OK) != 0 &&
		    !has_file((int)pids[i]))
			pids[kept++] = pids[i];
	}
	return kept;
}

/*
 * The tree's processes that run without the library's endpoint, after
 * waiting up to START_WAIT_MS for them to make one or end.
 */
static unsigned unstarted(const char *cdir, bool (*has_file)(int pid))
{
	static uint32_t pids[TREE_MAX];
	size_t n;

	for (int waited = 0;; waited += START_WAIT_STEP_MS) {
		/* the tree as its latest records say (an exec of a static program, an end) */
		if ((n = exec_watch__tree(pids, TREE_MAX)) == (size_t)-1)
			return 0;
		if (!(n = without_endpoint(cdir, pids, n, has_file)) || waited >= START_WAIT_MS)
			return (unsigned)n;
		nanosleep(&(struct timespec){0, START_WAIT_STEP_MS * 1000000L}, NULL);
	}
}

unsigned onefile_live__unwritten(const char *dir, const char *base, bool (*has_file)(int pid),
				 unsigned *not_started)
{
	char cdir[PATH_MAX], path[PATH_MAX + 300], text[PATH_MAX + 512];
	unsigned long long since = 0;
	char state;
	struct stat want;
	struct dirent *e;
	unsigned n = 0;
	DIR *d;

	*not_started = 0;
	if (!textfile__stat("/proc/self/stat", &since, &state) || !since || stat(dir, &want) < 0 ||
	    ap_control_dir_make(cdir, sizeof(cdir), getenv("XDG_RUNTIME_DIR")))
		return 0;
	*not_started =
	    unstarted(cdir, has_file); /* first: they may make their endpoints meanwhile */
	if (!(d = opendir(cdir)))
		return 0;
	while ((e = readdir(d))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);

		if (pid <= 0 || *end || pid == getpid() || !onefile__alive((int)pid))
			continue;
		snprintf(path, sizeof(path), "%s/%s", cdir, e->d_name);
		if (textfile__read(path, text, sizeof(text)) <= 0 ||
		    strncmp(text, AP_CONTROL_MAGIC "\n", strlen(AP_CONTROL_MAGIC) + 1) ||
		    textfile__field_u64(text, "start") < since)
			continue; /* not an endpoint, or a process older than this run */
		n += names_unwritten(text, &want, base);
	}
	closedir(d);
	return n;
}
