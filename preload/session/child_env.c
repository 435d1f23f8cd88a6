/* SPDX-License-Identifier: MIT */
/*
 * child_env.c - the environment descendants get: with AUTOPROF_FOLLOW=1 every exec
 * keeps the library in LD_PRELOAD (and libautoprof-memory.so when this process
 * profiles memory with it) and every AUTOPROF_* variable, even when the
 * program hands execve an environment of its own; with AUTOPROF_FOLLOW=0 the
 * libraries leave LD_PRELOAD at the start, so no descendant loads them.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "autoprof/env.h"
#include "internal.h"
#include "memory.h"

extern char **environ;

/* The path this library was loaded from. */
static const char *library_path(void)
{
	static char path[PATH_MAX];
	Dl_info info;

	if (!path[0] && dladdr((void *)library_path, &info) && info.dli_fname)
		snprintf(path, sizeof(path), "%s", info.dli_fname);
	return path;
}

/* libautoprof-memory.so's path when this process profiles memory with it, else "". */
static const char *memory_path = "";

/* Learn the libraries' paths now: exec wrappers may run in a vfork child. */
void child_env__init(void)
{
	library_path();
	if (autoprof.cfg->memory)
		memory_path = memory_link__path();
}

/* Is lib one of the ':'- or ' '-separated entries of list? */
static bool list_has(const char *list, const char *lib)
{
	size_t n = strlen(lib);

	for (const char *p = list; p && *p;) {
		size_t len = strcspn(p, ": ");

		if (len == n && !strncmp(p, lib, n))
			return true;
		p += len;
		p += strspn(p, ": ");
	}
	return false;
}

/*
 * Take this library (and libautoprof-memory.so) out of LD_PRELOAD
 * (AUTOPROF_FOLLOW=0): this process already has them; its descendants,
 * however started, will not load them. Not async-signal-safe.
 */
void child_env__drop_preload(void)
{
	const char *old = getenv("LD_PRELOAD"), *lib = library_path(), *mem = memory_link__path();
	size_t n = 0;

	if (!old || !*lib)
		return;

	/* on the stack, as long as the value (an environment string: at most 128 KiB), so
	 * that every other entry stays, however many the program named */
	char buf[strlen(old) + 1];

	buf[0] = 0;
	for (const char *p = old; *p;) {
		size_t len = strcspn(p, ": ");

		if (len && !(len == strlen(lib) && !strncmp(p, lib, len)) &&
		    !(*mem && len == strlen(mem) && !strncmp(p, mem, len))) {
			if (n)
				buf[n++] = ':';
			memcpy(buf + n, p, len);
			n += len;
			buf[n] = 0;
		}
		p += len;
		p += strspn(p, ": ");
	}
	if (n)
		setenv("LD_PRELOAD", buf, 1);
	else
		unsetenv("LD_PRELOAD");
}

size_t child_env__count(char *const *envp)
{
	size_t n = 0;

	while (envp && envp[n])
		n++;
	return n;
}

static bool is_ours(const char *entry)
{
	return !strncmp(entry, AUTOPROF_ENV_PREFIX, strlen(AUTOPROF_ENV_PREFIX)) ||
	       !strncmp(entry, "LD_PRELOAD=", 11);
}

/* Append "name=value" to the string area; returns it, or NULL when full. */
static char *put(char **strings, size_t *left, const char *name, const char *value)
{
	int n = snprintf(*strings, *left, "%s=%s", name, value);
	char *s = *strings;

	if (n < 0 || (size_t)n >= *left)
		return NULL;
	*strings += n + 1;
	*left -= (size_t)n + 1;
	return s;
}

/*
 * When the counters started, for the next image: moved on by the time
 * sampling has been paused now (image_counters.c moves it at each start), so
 * that their elapsed time stays the time sampling was on.
 */
static uint64_t counters_start(void)
{
	uint64_t start = autoprof.counters.start_ns, now = ap_now();
	uint64_t off = __atomic_load_n(&autoprof.state_since, __ATOMIC_SEQ_CST);

	if (!start)
		start = autoprof.start_time;
	if (__atomic_load_n(&autoprof.paused, __ATOMIC_SEQ_CST) && now > off)
		start += now - (off > start ? off : start);
	return start;
}

/* The LD_PRELOAD an exec hands on: envp's (the program's own value), or ours. */
static const char *program_preload(char *const *envp)
{
	const char *pre = NULL;

	for (size_t i = 0; envp && envp[i]; i++)
		if (!strncmp(envp[i], "LD_PRELOAD=", 11))
			pre = envp[i] + 11;
	return pre ? pre : getenv("LD_PRELOAD");
}

size_t child_env__strings_len(char *const *envp)
{
	const char *pre = program_preload(envp);
	size_t n = sizeof("LD_PRELOAD=") + strlen(library_path()) + strlen(memory_path) + 2;

	n += pre ? strlen(pre) : 0;
	return CHILD_ENV_STRINGS + (n < CHILD_ENV_ENTRY_MAX ? n : CHILD_ENV_ENTRY_MAX);
}

/* One line, once, for an exec whose environment cannot carry the library. */
static char **unfollowed(char *const *envp, const char *why)
{
	static bool said; /* shared with a vfork child: once for both */

	if (!said) {
		said = true;
		pr_warn("an exec'd program is not profiled: %s (the next ones the same)", why);
	}
	return (char **)envp;
}

/*
 * Append "LD_PRELOAD=" with this library first, libautoprof-memory.so (when
 * this process profiles memory with it) after it and the program's pre: the
 * whole value, however long (the caller sized the area with
 * child_env__strings_len()). Returns the entry, or NULL when it does not fit.
 */
static char *put_preload(char **strings, size_t *left, const char *lib, const char *pre)
{
	bool has_lib = pre && list_has(pre, lib);
	bool has_mem = !*memory_path || (pre && list_has(pre, memory_path));
	int len = snprintf(*strings, *left, "LD_PRELOAD=%s%s%s%s%s", has_lib ? "" : lib,
			   has_lib || has_mem ? "" : ":", has_mem ? "" : memory_path,
			   (has_lib && has_mem) || !pre || !*pre ? "" : ":", pre ? pre : "");
	char *s = *strings;

	if (len < 0 || (size_t)len >= *left || (size_t)len >= CHILD_ENV_ENTRY_MAX)
		return NULL;
	*strings += len + 1;
	*left -= (size_t)len + 1;
	return s;
}

/*
 * The environment for an exec of the next image: envp (the program's) less
 * its LD_PRELOAD and AUTOPROF_* entries, plus LD_PRELOAD with this library
 * (and libautoprof-memory.so when this process profiles memory with it),
 * our AUTOPROF_* variables, AUTOPROF_IMAGE (pid:n:left), AUTOPROF_START as sampling is now
 * (on or paused) and, when this process owns
 * counters and execs itself (same_process, not a spawned or vfork child),
 * AUTOPROF_COUNTER_FDS. Everything goes into the caller's store
 * (store_len pointers; envp's count plus 64 is enough) and strings
 * (child_env__strings_len(envp) bytes), so it works in a vfork child.
 * Returns store, or envp unchanged when profiling does not follow execs or
 * it does not fit (said once). Allocates nothing (a vfork child calls it).
 */
char **child_env__for_exec(char *const *envp, char **store, size_t store_len, char *strings,
			   size_t strings_len, bool same_process)
{
	const char *lib = library_path();
	char value[4096], *entry;
	size_t n = 0, left = strings_len;

	if (!autoprof.cfg->follow || !*lib)
		return (char **)envp;
	for (size_t i = 0; envp && envp[i]; i++) {
		if (is_ours(envp[i]))
			continue;
		if (n + 1 >= store_len)
			return unfollowed(envp, "its environment has too many entries");
		store[n++] = envp[i];
	}
	if (n + 1 >= store_len ||
	    !(entry = put_preload(&strings, &left, lib, program_preload(envp))))
		return unfollowed(envp, "its LD_PRELOAD is too long to add the library to");
	store[n++] = entry;

	for (enum ap_env i = 0; i < AP_ENV_COUNT; i++) {
		const char *v = ap_env(i);

		if (i == AP_ENV_IMAGE) {
			snprintf(value, sizeof(value), "%d:%d:%d", (int)autoprof.pid,
				 lifecycle__next_gen(), (int)lifecycle__file_left());
			v = value;
		} else if (i == AP_ENV_START) {
			/* the next image goes on as this one is now (`autoprof ctl` start/stop);
			 * unset and on stays unset (on is the default) */
			v = __atomic_load_n(&autoprof.paused, __ATOMIC_SEQ_CST) ? "0"
			    : v							? "1"
										: NULL;
		} else if (i == AP_ENV_COUNTER_FDS) {
			/* only when this exec's finish kept them open across it (lifecycle__
			 * before_exec): an exec that did not finish the image (its session was
			 * down: 10 of 100 runs of threads' execs racing an exit) named fds the
			 * exec then closed, and the next image said so and counted nothing */
			v = same_process && getpid() == autoprof.pid && autoprof.exec_pending &&
				    autoprof.counters.n &&
				    !counting__spec(&autoprof.counters, counters_start(), value,
						    sizeof(value))
				? value
				: NULL;
		}
		if (!v)
			continue;
		if (n + 1 >= store_len || !(entry = put(&strings, &left, ap_env_name(i), v)))
			return unfollowed(envp, "its environment is too long to add AUTOPROF_* to");
		store[n++] = entry;
	}
	store[n] = NULL;
	return store;
}
