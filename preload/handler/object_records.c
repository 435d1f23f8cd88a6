/* SPDX-License-Identifier: MIT */
/*
 * object_records.c - the MMAP2 records of the loaded objects (objects.c's
 * table), one per executable segment, written once per file: from the
 * handler before the first sample that needs an object, and outside it for
 * every object a dlclose or a new file would leave unwritten.
 */
#define UNW_LOCAL_ONLY
#include <elf.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "objects.h"

/*
 * Lay out the MMAP2 records of o's executable segments into buf; returns the
 * bytes used, 0 when they do not fit. Async-signal-safe.
 */
static size_t object_records(const struct object *o, char *buf, size_t cap, pid_t pid)
{
	size_t len = 0;

	for (int i = 0; i < o->phnum; i++) {
		const ElfW(Phdr) *ph = &o->phdr[i];
		uint64_t va, start, end, n;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		va = o->bias + ph->p_vaddr;
		start = va & ~(PAGE - 1);
		end = (va + ph->p_memsz + PAGE - 1) & ~(PAGE - 1);
		n = record__mmap2(buf + len, cap - len, (uint32_t)pid, start, end - start,
				  ph->p_offset - (va - start), 0, 0, 0,
				  PROT_EXEC | (ph->p_flags & PF_R ? PROT_READ : 0), MAP_PRIVATE,
				  o->name, o->loaded_after, o->bid, o->bid_size);
		if (!n)
			return 0;
		len += n;
	}
	return len;
}

/* The bytes object_records() needs for o. Async-signal-safe. */
static size_t records_size(const struct object *o)
{
	size_t one = sizeof(struct perf_record_mmap2) + PERF_ALIGN8(strlen(o->name) + 1) +
		     sizeof(struct autoprof_sample_id);
	size_t n = 0;

	for (int i = 0; i < o->phnum; i++)
		n += o->phdr[i].p_type == PT_LOAD && (o->phdr[i].p_flags & PF_X);
	return n * one;
}

/* Claim o's records for the current file: true for the one caller that must write them. */
static bool claim(struct object *o)
{
	int gen = objects__file_gen();
	int *written = objects__written_gen(o);
	int old = __atomic_load_n(written, __ATOMIC_ACQUIRE);

	if (old == gen || !o->name[0])
		return false;
	return __atomic_compare_exchange_n(written, &old, gen, false, __ATOMIC_ACQ_REL,
					   __ATOMIC_RELAXED);
}

/*
 * Before t's SAMPLE with this chain (context markers allowed) is written:
 * append to t's buffer the MMAP2 records of every object the chain touches
 * whose records this file lacks, learning objects loaded since the last
 * refresh. Async-signal-safe.
 */
void object_records__note(struct ap_thread *t, const uint64_t *chain, unsigned nr)
{
	if (!objects__enter())
		return;
	object_records__note_held(t, chain, nr);
	objects__leave();
}

/*
 * object_records__note() for a caller that holds the table (objects__enter(): the
 * handler's drain, once for all its samples). Async-signal-safe.
 */
void object_records__note_held(struct ap_thread *t, const uint64_t *chain, unsigned nr)
{
	struct object *hint = NULL;

	if (!objects__ready())
		return;
	for (unsigned i = 0; i < nr; i++) {
		uintptr_t ip = chain[i];
		struct object *o;
		size_t cap;
		char *out;

		if (ip >= (1ULL << 47) || ip < PAGE)
			continue; /* a context marker or a kernel address */
		o = objects__lookup(ip, hint);
		if (!o)
			continue;
		hint = o;
		if (!claim(o))
			continue;
		cap = records_size(o);
		out = buffer__reserve(t, cap);
		t->len += object_records(o, out, cap, (pid_t)t->sampler->pid);
	}
}

/*
 * Write the records of every object this file lacks: into the calling
 * thread's buffer when buffered and it is sampled (no system call; flushed
 * with its samples), else to the file (staged where it is not made yet);
 * the sampling signal signo blocked meanwhile (its handler could write the
 * same buffer). The caller keeps the table still. Not async-signal-safe.
 */
static void write_unwritten(struct writer *w, pid_t pid, int signo, bool buffered)
{
	struct ap_thread *t = buffered ? ap_self : NULL;
	char buf[16384];
	size_t len = 0;
	int n = objects__count();
	sigset_t old, block;

	sigemptyset(&block);
	sigaddset(&block, signo);
	raw_syscall(SYS_rt_sigprocmask, SIG_BLOCK, &block, &old, _NSIG / 8, 0, 0);
	/* the buffer taken (as samplers__rename does): a visitor flushing it, or a
	 * memory sample from a handler of the program that interrupts us here
	 * (AUTOPROF_MEMORY), would otherwise write into it at the same place */
	if (t && (__atomic_load_n(&t->closed, __ATOMIC_ACQUIRE) || !registry__grab(t, true)))
		t = NULL;
	for (int i = 0; i < n; i++) {
		struct object *o = objects__at(i);
		size_t need;

		if (!o || !claim(o))
			continue;
		need = records_size(o);
		if (t) {
			t->len += object_records(o, buffer__reserve(t, need), need, pid);
			continue;
		}
		if (len + need > sizeof(buf) && len) {
			writer__append_staged(w, buf, len);
			len = 0;
		}
		len += object_records(o, buf + len, sizeof(buf) - len, pid);
	}
	if (len)
		writer__append_staged(w, buf, len);
	if (t)
		registry__release(t);
	raw_syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, _NSIG / 8, 0, 0);
}

/* Before a dlclose (caller holds sync_lock): see write_unwritten. Not async-signal-safe. */
void object_records__write_unwritten(struct writer *w, pid_t pid, int signo)
{
	write_unwritten(w, pid, signo, true);
}

/*
 * The records of the objects loaded since the file's first records
 * (libunwind's and liblzma's, as unwind_lib.c loads them) written now, to
 * the file: from a sampled thread's buffer they would come with its last
 * samples, and a reader that walks the file once (autoprof-report) reads it
 * again from a late MMAP2. Not async-signal-safe.
 */
void object_records__write_loaded(struct writer *w, pid_t pid, int signo)
{
	if (!objects__enter())
		return; /* a dlclose unmaps: they go with their first samples */
	write_unwritten(w, pid, signo, false);
	objects__leave();
}
