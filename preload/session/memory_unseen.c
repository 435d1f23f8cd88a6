/* SPDX-License-Identifier: MIT */
/*
 * memory_unseen.c - did the program's memory pass through the functions
 * that libautoprof-memory.so interposes? A program whose allocator the
 * library cannot see (linked into the program with names of its own, as
 * Rust's jemallocator or a C arena over mmap; a runtime's heap: a JVM's,
 * Go's, Python's small-object arenas) passes the reach check (its malloc,
 * if it calls one, reaches the wrappers) and gets a profile of the little
 * it allocates through malloc & co, silently. So, as heaptrack states its
 * RSS beside the heap: the anonymous memory the process holds at its end
 * (/proc/self/status's RssAnon, read once at the start and once at the
 * end), less the profiler's own tables, is compared with what the wrappers
 * saw allocated; when it grew by at least AP_UNSEEN_LEAST and the wrappers
 * saw less than a quarter of that, one line says so, and the file states
 * the bytes not seen (events.h's AP_MEMORY_UNSEEN_ADDR record) for the
 * reader to say.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "memory.h"

/* The least growth worth a statement: a runtime's or a libc's own start-up stays below it. */
#define AP_UNSEEN_LEAST (32ULL << 20)

static uint64_t base_anon; /* RssAnon at the image's first start, bytes; 0: unknown */
static uint32_t base_pid;  /* the process it was read in (a forked child has its own) */
static bool checked;	   /* said (at an exec that failed): not again at the end */

/* /proc/self/status's RssAnon in bytes, or 0. No allocation (raw system calls). */
static uint64_t rss_anon(void)
{
	char buf[4096];
	ssize_t n = raw_syscall__read_file("/proc/self/status", buf, sizeof(buf) - 1);
	const char *at;

	if (n <= 0)
		return 0;
	buf[n] = 0;
	at = strstr(buf, "\nRssAnon:");
	return at ? strtoull(at + 9, NULL, 10) * 1024 : 0;
}

static uint32_t this_pid(void)
{
	return (uint32_t)raw_syscall(SYS_getpid, 0, 0, 0, 0, 0, 0);
}

void memory_unseen__start(void)
{
	base_anon = rss_anon();
	base_pid = this_pid();
	checked = false;
}

void memory_unseen__fork_child(void)
{
	if (base_anon) /* (its counts start from zero: so does what it holds) */
		memory_unseen__start();
}

uint64_t memory_unseen__check(uint64_t seen)
{
	uint64_t now, own = live__footprint(), grew;

	if (checked || !base_anon || base_pid != this_pid() || !(now = rss_anon()) ||
	    now < base_anon + own)
		return 0; /* (a vfork child: not the image's) */
	grew = now - base_anon - own;
	if (grew < AP_UNSEEN_LEAST || seen >= grew / 4)
		return 0;
	checked = true;
	pr_warn(
	    "AUTOPROF_MEMORY: the process holds %.1f MiB more anonymous memory at its end than "
	    "at the start, and its allocations through malloc & co total about %.1f MiB: most of "
	    "its memory comes from an allocator the library cannot see (linked into the program "
	    "under names of its own, a runtime's heap, mmap), which is not in this profile",
	    (double)grew / (1 << 20), (double)seen / (1 << 20));
	return grew - seen;
}
