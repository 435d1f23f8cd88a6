// SPDX-License-Identifier: MIT
/*
 * test-report-windows.c - the machine over many windows of one process
 * (issue 26): each window's file repeats every mapping of its process, and
 * the machine keeps a mapping once, as long as the repeat says nothing new
 * (the same range, offset and object, in the same epoch, nothing mapped over
 * it since). Lookups give what they gave with every copy kept.
 */
#include "../../report/model/model.h"

#include <stdlib.h>
#include <string.h>

#include "tap.h"

#define WINDOWS 1440

static struct machine m;

static void start(void)
{
	memset(&m, 0, sizeof(m));
	m.dsos.no_load = true;
}

/* The dso's short name of @pid's map at @addr at time @t, or "". */
static const char *at(u32 pid, u64 addr, u64 t)
{
	struct proc *p = machine__find_proc(&m, pid);
	const struct map *mp =
	    p ? machine__proc_find_map(p, addr, t, machine__proc_epoch(p, t)) : NULL;

	return mp ? mp->dso->short_name : "";
}

static void test_repeats(void)
{
	struct proc *p;
	int i;

	start();
	for (i = 0; i < WINDOWS; i++) { /* each window: three objects at time 0 */
		machine__mmap(&m, 100, 0x1000, 0x1000, 0, "/bin/svc", 8, true, 0);
		machine__mmap(&m, 100, 0x10000, 0x4000, 0x1000, "/lib/libc.so.6", 14, true, 0);
		machine__mmap(&m, 100, 0x20000, 0x1000, 0, "[vdso]", 6, true, 0);
	}
	machine__finish(&m);
	p = machine__find_proc(&m, 100);
	ok(p && p->nr_maps == 3 && p->simple,
	   "1,440 windows' repeated mappings: 3 maps, none over another");
	ok(!strcmp(at(100, 0x10100, 5), "libc.so.6") && !strcmp(at(100, 0x1100, 5), "svc"),
	   "their addresses resolve");
	machine__exit(&m);
}

static void test_remapped(void)
{
	struct proc *p;

	start();
	machine__mmap(&m, 100, 0x10000, 0x4000, 0, "/libA", 5, true, 0);
	machine__mmap(&m, 100, 0x10000, 0x4000, 0, "/libB", 5, true, 50);	/* over it */
	machine__mmap(&m, 100, 0x10000, 0x4000, 0, "/libA", 5, true, 100);	/* and back */
	machine__mmap(&m, 100, 0x10000, 0x4000, 0, "/libA", 5, true, 150);	/* a repeat */
	machine__mmap(&m, 100, 0x10000, 0x4000, 0x1000, "/libA", 5, true, 200); /* new offset */
	machine__finish(&m);
	p = machine__find_proc(&m, 100);
	ok(p && p->nr_maps == 4, "a mapping again after another over it is kept; a repeat is not");
	ok(!strcmp(at(100, 0x10100, 10), "libA") && !strcmp(at(100, 0x10100, 60), "libB") &&
	       !strcmp(at(100, 0x10100, 120), "libA") && !strcmp(at(100, 0x10100, 170), "libA"),
	   "each time resolves to the object mapped then");
	machine__exit(&m);
}

static void test_exec_and_build_id(void)
{
	struct proc *p;

	start();
	machine__mmap(&m, 100, 0x1000, 0x1000, 0, "/bin/a", 6, true, 0);
	machine__comm(&m, 100, 100, "b", 1, true, 50); /* exec: a new epoch */
	machine__mmap(&m, 100, 0x1000, 0x1000, 0, "/bin/a", 6, true, 60);
	dsos__set_build_id(&m.dsos, "/usr/lib/libc.so.6", 18, "93ac61ec5a8eb1396f9f");
	dsos__set_build_id(&m.dsos, "/lib/libc.so.6", 14, "93ac61ec5a8eb1396f9f");
	machine__mmap(&m, 100, 0x10000, 0x4000, 0, "/usr/lib/libc.so.6", 18, true, 70);
	machine__mmap(&m, 100, 0x10000, 0x4000, 0, "/lib/libc.so.6", 14, true, 70);
	machine__mmap(&m, 100, 0x10000, 0x4000, 0, "/usr/lib/libc.so.6", 18, true, 80);
	machine__finish(&m);
	p = machine__find_proc(&m, 100);
	ok(p && p->nr_maps == 3,
	   "the same mapping after an exec is kept; one object under two paths (one build "
	   "id) is kept once");
	ok(!strcmp(at(100, 0x1100, 10), "a") && !strcmp(at(100, 0x1100, 70), "a") &&
	       !strcmp(at(100, 0x10100, 90), "libc.so.6"),
	   "and resolves in both epochs");
	machine__exit(&m);
}

int main(void)
{
	plan(6);
	test_repeats();
	test_remapped();
	test_exec_and_build_id();
	return tap_done();
}
