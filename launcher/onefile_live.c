/* SPDX-License-Identifier: MIT */
/*
 * onefile_live.c - the run's processes that outlive the command before
 * their first flush. A descendant's file is made at its first flush (one
 * that never samples makes none: preload/session/lifecycle.c), so a process
 * of the run still running when the command ends may have no file yet. Its
 * control endpoint (preload/session/control.c), written at its start, names
 * the file it will write: the endpoints of live processes started since the
 * launcher that name a descendant's file of this run (OUTPUT.PID or
 * OUTPUT.PID.N in OUTPUT's folder) not among the live files the caller
 * found (not there yet, or made since it looked) are the ones counted here.
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
#include "common.h"
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

/* Read the control endpoint at @path into @text (@cap bytes): false when it is none. */
static bool read_endpoint(const char *path, char *text, size_t cap)
{
	return textfile__read(path, text, cap) > 0 &&
	       !strncmp(text, AP_CONTROL_MAGIC "\n", strlen(AP_CONTROL_MAGIC) + 1);
}

/*
 * Does the endpoint text @text of process @pid name a descendant's file in
 * the folder @want that is not among the live files the caller found
 * (@has_file)? Not written yet, or written since the caller looked (its
 * first flush came between): either way a file to come after the merge.
 */
static bool names_unwritten(const char *text, const struct stat *want, const char *base, int pid,
			    bool (*has_file)(int pid))
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
	       st.st_dev == want->st_dev && st.st_ino == want->st_ino && !has_file(pid);
}

#define TREE_MAX	   4096
#define START_WAIT_NS	   250000000LL /* for a process of the tree to start the library */
#define START_WAIT_STEP_NS 10000000L

static bool maps_name_library(const char *path);

/* What a process of the tree is to the closing line (unstarted()). */
enum tree_kind {
	TREE_SKIP,   /* ended, not of this run, has an endpoint or a file, or never runs the library
		      */
	TREE_LOADED, /* runs the library, its endpoint elsewhere (another XDG_RUNTIME_DIR or user)
		      */
	TREE_NOT_YET /* runs without the library so far */
};

/*
 * Process @pid of the tree: one this run started (@since: the launcher's
 * start, in /proc's clock ticks; a pid reused by another process is not),
 * that runs, whose endpoint is not in @cdir, with no file of the run: does
 * it run the library (its mappings name it), or never can it (a static
 * program, a set-user-ID or set-group-ID one, for which the loader ignores
 * LD_PRELOAD), or not yet?
 */
static enum tree_kind tree_kind(uint32_t pid, unsigned long long since, const char *cdir,
				bool (*has_file)(int pid))
{
	char path[PATH_MAX + 32], exe[PATH_MAX], text[4096];
	unsigned long long start = 0;
	char state;
	ssize_t len;
	unsigned long ids[4];
	const char *at;

	snprintf(path, sizeof(path), "%s/%u", cdir, pid);
	if (!onefile__alive((int)pid) || access(path, F_OK) == 0 || has_file((int)pid))
		return TREE_SKIP;
	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	if (!textfile__stat(path, &start, &state) || start < since)
		return TREE_SKIP;
	snprintf(path, sizeof(path), "/proc/%u/exe", pid);
	len = readlink(path, exe, sizeof(exe) - 1);
	if (len > 0) {
		exe[len] = 0;
		if (elf_interp__static_program(exe))
			return TREE_SKIP;
	}
	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	if (textfile__read(path, text, sizeof(text)) > 0) {
		if ((at = strstr(text, "\nUid:")) &&
		    sscanf(at + 5, "%lu %lu", &ids[0], &ids[1]) == 2 &&
		    (at = strstr(text, "\nGid:")) &&
		    sscanf(at + 5, "%lu %lu", &ids[2], &ids[3]) == 2 &&
		    (ids[0] != ids[1] || ids[2] != ids[3]))
			return TREE_SKIP; /* a secure exec: no LD_PRELOAD */
	}
	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	return maps_name_library(path) ? TREE_LOADED : TREE_NOT_YET;
}

/* Do the mappings in @path (/proc/PID/maps) name libautoprof.so? */
static bool maps_name_library(const char *path)
{
	char line[PATH_MAX + 128];
	bool yes = false;
	FILE *f = fopen(path, "re");

	while (f && !yes && fgets(line, sizeof(line), f))
		yes = strstr(line, "/libautoprof.so") != NULL;
	if (f)
		fclose(f);
	return yes;
}

/* The processes unstarted() counted as running the library with their endpoint elsewhere:
 * one that writes its endpoint here just after is not counted again (onefile_live__unwritten()). */
static uint32_t loaded_pids[TREE_MAX];
static unsigned nr_loaded;

static bool counted_loaded(long pid)
{
	for (unsigned i = 0; i < nr_loaded; i++)
		if (loaded_pids[i] == (uint32_t)pid)
			return true;
	return false;
}

static long long mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/*
 * The tree's processes that run without the library's endpoint in @cdir,
 * waiting up to START_WAIT_NS for them to make one, end, or show the
 * library: how many still run without it; in @loaded, how many run it with
 * their endpoint elsewhere.
 */
static unsigned unstarted(const char *cdir, unsigned long long since, bool (*has_file)(int pid),
			  unsigned *loaded)
{
	static uint32_t pids[TREE_MAX];
	long long deadline = mono_ns() + START_WAIT_NS;
	size_t n = exec_watch__tree(pids, TREE_MAX);

	*loaded = nr_loaded = 0;
	if (n == (size_t)-1)
		return 0;
	for (;;) {
		size_t kept = 0;

		for (size_t i = 0; i < n; i++) {
			enum tree_kind k = tree_kind(pids[i], since, cdir, has_file);

			if (k == TREE_LOADED && nr_loaded < TREE_MAX)
				loaded_pids[nr_loaded++] = pids[i];
			*loaded += k == TREE_LOADED;
			if (k == TREE_NOT_YET)
				pids[kept++] = pids[i];
		}
		n = kept;
		if (!n || mono_ns() >= deadline)
			return (unsigned)n;
		nanosleep(&(struct timespec){0, START_WAIT_STEP_NS}, NULL);
	}
}

bool onefile_live__moved_on(int pid, const char *name)
{
	char cdir[PATH_MAX], path[PATH_MAX + 32], text[PATH_MAX + 512], file[PATH_MAX];
	const char *slash;

	if (ap_control_dir_make(cdir, sizeof(cdir), getenv("XDG_RUNTIME_DIR")))
		return false;
	snprintf(path, sizeof(path), "%s/%d", cdir, pid);
	if (!read_endpoint(path, text, sizeof(text)) ||
	    !textfile__field(text, "file", file, sizeof(file)) || !*file)
		return false;
	slash = strrchr(file, '/');
	return strcmp(slash ? slash + 1 : file, name) != 0;
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
	/* first: they may make their endpoints meanwhile */
	*not_started = unstarted(cdir, since, has_file, &n);
	if (!(d = opendir(cdir)))
		return n;
	while ((e = readdir(d))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);

		if (pid <= 0 || *end || pid == getpid() || counted_loaded(pid) ||
		    !onefile__alive((int)pid))
			continue;
		snprintf(path, sizeof(path), "%s/%s", cdir, e->d_name);
		if (!read_endpoint(path, text, sizeof(text)) ||
		    textfile__field_u64(text, "start") < since)
			continue; /* not an endpoint, or a process older than this run */
		n += names_unwritten(text, &want, base, (int)pid, has_file);
	}
	closedir(d);
	return n;
}
