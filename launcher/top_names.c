/* SPDX-License-Identifier: MIT */
/*
 * top_names.c - the function names of autoprof top (top.c): each sampled
 * process's /proc/PID/maps and each object's ELF symbols through libdwfl,
 * looked up once per address and process image (an exec starts anew), the
 * functions interned with their self and total counts.
 */
#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launcher.h"
#include "util/util.h" /* report/'s: strset__hash */

#define NO_FUNC UINT32_MAX

struct addr_slot {
	uint64_t addr;
	uint32_t gen;  /* the image it was named in (struct proc) */
	uint32_t func; /* NO_FUNC: empty slot */
};

/* A process image of the run (a child, an exec): its maps and their symbols. */
struct proc {
	int pid;
	uint32_t gen;	   /* unique per image: the address cache's key */
	Dwfl *dwfl;	   /* its /proc/PID/maps, read when an address is not in them */
	uint64_t reported; /* the samples count when they were read */
};

#define MAX_PROCS 64

static struct {
	struct proc procs[MAX_PROCS];
	unsigned nr_procs, next_evict;
	uint32_t gens;
	struct addr_slot *addrs;
	size_t addr_cap, addr_nr;
	struct top_func *funcs;
	size_t nr_funcs, cap_funcs;
	uint32_t *by_name; /* open addressing, 2 * cap_funcs slots: function indexes */
	uint64_t samples;  /* the caller's count, for when to read the maps again */
} top;

static const Dwfl_Callbacks proc_callbacks = {
    .find_elf = dwfl_linux_proc_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
};

/* (Re)read @p's maps into its symbolizer. */
static void report_maps(struct proc *p)
{
	if (!p->dwfl)
		p->dwfl = dwfl_begin(&proc_callbacks);
	if (!p->dwfl)
		return;
	dwfl_report_begin(p->dwfl);
	dwfl_linux_proc_report(p->dwfl, p->pid);
	dwfl_report_end(p->dwfl, NULL, NULL);
	p->reported = top.samples;
}

/* The image process @pid runs now (the oldest of MAX_PROCS forgotten for a new one). */
static struct proc *proc_of(int pid)
{
	struct proc *p;

	for (unsigned i = 0; i < top.nr_procs; i++)
		if (top.procs[i].pid == pid)
			return &top.procs[i];
	if (top.nr_procs < MAX_PROCS) {
		p = &top.procs[top.nr_procs++];
	} else {
		p = &top.procs[top.next_evict++ % MAX_PROCS];
		if (p->dwfl)
			dwfl_end(p->dwfl);
	}
	*p = (struct proc){.pid = pid, .gen = ++top.gens, .reported = UINT64_MAX};
	return p;
}

/* Process @pid exec'd: a new image, whose addresses mean other functions. */
void top_names__exec(int pid)
{
	struct proc *p = proc_of(pid);

	if (p->dwfl)
		dwfl_end(p->dwfl);
	p->dwfl = NULL;
	p->gen = ++top.gens;
	p->reported = UINT64_MAX;
}

/* The function named @name (interned). */
static uint64_t name_hash(const char *s)
{
	return strset__hash(s, strlen(s));
}

/* Index function @i in the name table (sized for twice the functions' room). */
static void index_name(uint32_t i)
{
	size_t mask = 2 * top.cap_funcs - 1, j = name_hash(top.funcs[i].name) & mask;

	while (top.by_name[j] != NO_FUNC)
		j = (j + 1) & mask;
	top.by_name[j] = i;
}

static uint32_t intern(const char *name)
{
	size_t j;

	if (top.cap_funcs)
		for (j = name_hash(name) & (2 * top.cap_funcs - 1); top.by_name[j] != NO_FUNC;
		     j = (j + 1) & (2 * top.cap_funcs - 1))
			if (!strcmp(top.funcs[top.by_name[j]].name, name))
				return top.by_name[j];
	if (top.nr_funcs == top.cap_funcs) {
		size_t cap = top.cap_funcs ? 2 * top.cap_funcs : 256;
		struct top_func *v = realloc(top.funcs, cap * sizeof(*v));
		uint32_t *idx = malloc(2 * cap * sizeof(*idx));

		if (!v || !idx) {
			free(idx);
			if (v)
				top.funcs = v;
			return NO_FUNC;
		}
		free(top.by_name);
		top.funcs = v;
		top.by_name = idx;
		top.cap_funcs = cap;
		memset(idx, 0xff, 2 * cap * sizeof(*idx));
		for (uint32_t i = 0; i < top.nr_funcs; i++)
			index_name(i);
	}
	top.funcs[top.nr_funcs] = (struct top_func){.name = strdup(name), .mark = UINT64_MAX};
	if (!top.funcs[top.nr_funcs].name)
		return NO_FUNC;
	index_name((uint32_t)top.nr_funcs);
	return (uint32_t)top.nr_funcs++;
}

/* The name of the function at @addr: symbol, else [object], else the address. */
static uint32_t name_addr(struct proc *p, uint64_t addr)
{
	Dwfl_Module *mod = p->dwfl ? dwfl_addrmodule(p->dwfl, addr) : NULL;
	const char *sym = NULL, *obj = NULL;
	char buf[512];

	if (!mod && top.samples != p->reported) {
		report_maps(p); /* mapped since the last look */
		mod = p->dwfl ? dwfl_addrmodule(p->dwfl, addr) : NULL;
	}
	if (mod) {
		sym = dwfl_module_addrname(mod, addr);
		obj = dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
	}
	if (addr >= 0xffff800000000000ULL)
		snprintf(buf, sizeof(buf), "[kernel]");
	else if (sym)
		snprintf(buf, sizeof(buf), "%s", sym);
	else if (obj)
		snprintf(buf, sizeof(buf), "[%s]", strrchr(obj, '/') ? strrchr(obj, '/') + 1 : obj);
	else
		snprintf(buf, sizeof(buf), "[unknown]");
	return intern(buf);
}

/* The function of @addr, from the cache of addresses or named now. */
static uint32_t func_of(struct proc *p, uint64_t addr)
{
	size_t i;

	if (top.addr_nr * 2 >= top.addr_cap) {
		size_t cap = top.addr_cap ? 2 * top.addr_cap : 4096;
		struct addr_slot *v = malloc(cap * sizeof(*v)), *old = top.addrs;

		if (!v)
			return NO_FUNC;
		for (i = 0; i < cap; i++)
			v[i].func = NO_FUNC;
		for (size_t j = 0; j < top.addr_cap; j++)
			if (old[j].func != NO_FUNC) {
				for (i = ((old[j].addr ^ old[j].gen) * 0x9e3779b97f4a7c15ULL >>
					  20) &
					 (cap - 1);
				     v[i].func != NO_FUNC; i = (i + 1) & (cap - 1))
					;
				v[i] = old[j];
			}
		free(old);
		top.addrs = v;
		top.addr_cap = cap;
	}
	for (i = ((addr ^ p->gen) * 0x9e3779b97f4a7c15ULL >> 20) & (top.addr_cap - 1);
	     top.addrs[i].func != NO_FUNC; i = (i + 1) & (top.addr_cap - 1))
		if (top.addrs[i].addr == addr && top.addrs[i].gen == p->gen)
			return top.addrs[i].func;
	top.addrs[i].addr = addr;
	top.addrs[i].gen = p->gen;
	top.addrs[i].func = name_addr(p, addr);
	top.addr_nr++;
	return top.addrs[i].func;
}

uint32_t top_names__func(int pid, uint64_t addr, uint64_t samples)
{
	top.samples = samples;
	return func_of(proc_of(pid), addr);
}

struct top_func *top_names__funcs(size_t *nr)
{
	*nr = top.nr_funcs;
	return top.funcs;
}

void top_names__zero(void)
{
	for (size_t i = 0; i < top.nr_funcs; i++) {
		top.funcs[i].self = top.funcs[i].total = 0;
		top.funcs[i].mark = UINT64_MAX;
	}
}

void top_names__end(void)
{
	for (unsigned i = 0; i < top.nr_procs; i++)
		if (top.procs[i].dwfl)
			dwfl_end(top.procs[i].dwfl);
}
