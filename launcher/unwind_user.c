/* SPDX-License-Identifier: MIT */
/*
 * unwind_user.c - the outside run's user stacks from register and stack
 * copies (PERF_SAMPLE_REGS_USER + STACK_USER), unwound by the report's own
 * unwinder (report/model/unwind_dwarf.c, libdw with its cached CFI rules)
 * against the process model of report/model/machine.c, fed the MMAP2, COMM,
 * FORK and EXIT records as the rings give them. Built with -Ireport: the
 * one launcher file that sees the report's types. Not async-signal-safe.
 */
#include <stdlib.h>
#include <sys/mman.h>

#include "model/model.h"
#include "outside.h"

struct unwind_user {
	struct machine m;
	struct unwinder *uw;
	bool dirty; /* maps added since machine__finish() */
};

struct unwind_user *unwind_user__new(void)
{
	struct unwind_user *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->uw = unwind_dwarf__new();
	if (!b->uw) {
		free(b);
		return NULL;
	}
	return b;
}

void unwind_user__record(struct unwind_user *b, const struct perf_event_header *h, uint64_t time)
{
	const char *p = (const char *)h;

	if (!b)
		return;
	switch (h->type) {
	case PERF_RECORD_MMAP2: {
		const struct perf_record_mmap2 *mm = (const void *)h;
		const char *name = mm->filename;
		size_t room = h->size - (size_t)(name - p);

		if ((h->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL)
			return;
		machine__mmap(&b->m, mm->pid, mm->start, mm->len, mm->pgoff, name,
			      strnlen(name, room), (mm->prot & PROT_EXEC) != 0, time);
		b->dirty = true;
		return;
	}
	case PERF_RECORD_COMM: {
		const struct perf_record_comm *c = (const void *)h;
		size_t room = h->size - sizeof(*c);

		machine__comm(&b->m, c->pid, c->tid, c->comm, strnlen(c->comm, room),
			      h->misc & PERF_RECORD_MISC_COMM_EXEC, time);
		b->dirty = true;
		return;
	}
	case PERF_RECORD_FORK: {
		const struct perf_record_fork *f = (const void *)h;

		machine__fork(&b->m, f->pid, f->ppid, f->tid, f->ptid, time);
		b->dirty = true;
		return;
	}
	case PERF_RECORD_EXIT: {
		const struct perf_record_fork *f = (const void *)h;

		machine__exit_task(&b->m, f->pid, f->tid, time);
		return;
	}
	default:
		return;
	}
}

int unwind_user__unwind(struct unwind_user *b, uint32_t pid, uint32_t tid, uint64_t time,
			uint64_t abi, uint64_t mask, const uint8_t *regs, const uint8_t *stack,
			uint64_t size, uint64_t *out, int max)
{
	struct sample s = {.pid = pid, .tid = tid, .time = time, .has_tid = true, .has_time = true};
	struct user_stack us = {
	    .abi = abi, .mask = mask, .regs = regs, .stack = stack, .size = size};
	const u64 *ips;
	struct proc *p;
	u32 nr = 0;

	if (!b || max <= 0)
		return 0;
	if (b->dirty) {
		machine__finish(&b->m);
		b->dirty = false;
	}
	p = machine__find_proc(&b->m, pid);
	if (!p || unwind_dwarf__user(b->uw, p, &s, &us, false, &ips, (u32)max, &nr))
		return 0;
	for (u32 i = 0; i < nr; i++) /* callers as return addresses, as the kernel gives them */
		out[i] = i ? ips[i] + 1 : ips[i];
	return (int)nr;
}

void unwind_user__free(struct unwind_user *b)
{
	if (!b)
		return;
	unwind_dwarf__free(b->uw);
	machine__exit(&b->m);
	free(b);
}
