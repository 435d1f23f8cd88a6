/* SPDX-License-Identifier: MIT */
/*
 * memory_stack.c - the stack of an allocation sample (memory.c), walked on
 * the live stack of the allocating thread with the objects' .eh_frame rules
 * (handler/eh_frame.c, as the CPU samples' stack copies are), instead of
 * libunwind's fast trace: callgrind counted 93 instructions a frame in
 * unw_backtrace (libunwind 1.6.2, warm, python3 with 44 frames a sample),
 * most of a sample's cost; a frame here is a lookup in the thread's table
 * of rules and two loads.
 *
 *  - The rules are kept per thread in a table by pc (open addressing,
 *    doubled at half full from 1024 to 65536 entries, mmap: 24 bytes an
 *    entry), emptied when an object comes or goes (objects__generation);
 *    the table goes at the thread's exit (a TSD destructor).
 *  - The walk reads the stack only between the current stack pointer and
 *    the top of the thread's stack (pthread_getattr_np, once per thread):
 *    a read outside (a frame past the top, a coroutine's stack) ends it.
 *    It is asked before the program runs on the thread: the main thread's
 *    at the start, another's as it starts (threads.c's start_routine), never
 *    in a sample: glibc's pthread_getattr_np holds the thread's lock while
 *    it allocates (realloc), and a sample of that allocation asking again
 *    waited for that lock for ever (java -version at an interval of 1). A
 *    thread the library did not start is walked by libunwind.
 *  - A walk that does not end at the outermost frame (a return address
 *    marked undefined) nor as deep as asked (a pc without a rule, a rule
 *    this walk does not follow, a signal frame, a read outside, a stack
 *    that does not grow towards the caller) is not used: the caller takes
 *    libunwind's trace instead, so that stacks are libunwind's.
 * x86-64 only (eh_frame.c's rules); elsewhere libunwind's trace always.
 */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "dynsym.h"
#include "handler/eh_frame.h"
#include "memory.h"

/* C++'s operator new and new[] (all their forms), and allocators' functions that call another
 * entry point: a sample's stack starts at their caller. */
static const char *const new_names[] = {DYNSYM_NEW_NAMES, DYNSYM_ALLOC_NAMES};
#define NR_NEW (sizeof(new_names) / sizeof(new_names[0]))
/* Each name's definitions: libstdc++'s, the memory library's (cxx.c), an allocator's. */
#define DEFS_PER_NAME 4
static uintptr_t new_lo[NR_NEW * DEFS_PER_NAME] AP_LARGE_BSS,
    new_hi[NR_NEW * DEFS_PER_NAME] AP_LARGE_BSS;

/*
 * Find operator new's code wherever a loaded object defines it (libstdc++,
 * the memory library's wrappers, an allocator, the program): every
 * definition, since a call can pass through several (the wrapper, then
 * libstdc++'s new, whose malloc is the one sampled). Not async-signal-safe.
 */
void memory_stack__find_new(void)
{
	for (size_t i = 0; i < NR_NEW; i++) {
		struct dynsym_def d[DEFS_PER_NAME];
		int n = dynsym__all(new_names[i], d, DEFS_PER_NAME);

		for (int k = 0; k < DEFS_PER_NAME; k++) {
			bool has = k < n && d[k].size;

			new_lo[i * DEFS_PER_NAME + k] = has ? d[k].addr : 0;
			new_hi[i * DEFS_PER_NAME + k] = has ? d[k].addr + d[k].size : 0;
		}
	}
}

bool memory_stack__in_new(uint64_t pc)
{
	for (size_t i = 0; i < NR_NEW * DEFS_PER_NAME; i++)
		if (pc >= new_lo[i] && pc < new_hi[i])
			return true;
	return false;
}

#if defined(__x86_64__)

#define MIN_RULES (1U << 10)
#define MAX_RULES (1U << 16)

/* How a frame is unwound (an entry's how): flags. */
enum {
	H_RBP_BASE = 1,	 /* the CFA is rbp + cfa_off (else rsp + cfa_off) */
	H_RBP_SAVED = 2, /* the caller's rbp is at the CFA + rbp_off */
	H_RBP_LOST = 4,	 /* the caller's rbp is neither saved nor kept */
	H_OTHER = 8,	 /* one of the following */
	H_PLT = 16,	 /* a PLT entry: the CFA is 8 more from plt_ge on (pc & 15) */
	H_END = 32,	 /* the outermost frame: the return address is undefined */
	H_BAD = 64,	 /* no rule, or one this walk does not follow (a signal frame) */
};

/* A pc's rule, as the walk applies it (from eh_frame.c's struct rule). */
struct entry {
	uint64_t pc; /* 0: empty */
	int32_t cfa_off;
	int16_t ra_off, rbp_off;
	uint8_t how, plt_ge, pad[6];
};

struct rules {
	uint64_t gen; /* objects__generation() the entries were found under */
	uint32_t mask, used;
	struct entry e[]; /* mask + 1 */
};

#define DEAD ((struct rules *)1) /* the thread is exiting: no table any more */

/* The calling thread's table and stack [lo, hi) (hi 0 until known, 1: unknown). */
static AP_TLS struct rules *table;
static AP_TLS uint64_t stack_lo, stack_hi;
static pthread_key_t exit_key;
static int key_state; /* 0, 1 made, -1 failed; set once, before sampling (memory__start) */

static size_t table_bytes(uint32_t entries)
{
	return sizeof(struct rules) + (size_t)entries * sizeof(struct entry);
}

static struct rules *new_table(uint32_t entries)
{
	struct rules *r = mmap(NULL, table_bytes(entries), PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (r == MAP_FAILED)
		return NULL;
	r->mask = entries - 1;
	return r;
}

/* A thread exits: its table goes (an allocation sampled after walks with libunwind). */
static void on_thread_exit(void *unused)
{
	struct rules *r = table;

	(void)unused;
	table = DEAD;
	if (r && r != DEAD)
		munmap(r, table_bytes(r->mask + 1));
}

static void learn_thread(void);

/* Once, before sampling starts: the key whose destructor frees a thread's table, and the main
 * thread's stack. */
void memory_stack__init(void)
{
	if (!key_state)
		key_state = pthread_key_create(&exit_key, on_thread_exit) ? -1 : 1;
	/* The main thread's stack now, outside the program's malloc: glibc
	 * finds it by reading /proc/self/maps (fopen, getrlimit), which a
	 * sample inside malloc must not do (seccomp, descriptor numbers). */
	if (!stack_hi && syscall(SYS_gettid) == getpid())
		learn_thread();
}

static inline uint32_t slot_of(uint64_t pc, uint32_t mask)
{
	return (uint32_t)((pc * 0x9E3779B97F4A7C15ULL) >> 40) & mask;
}

/* Double t (the entries rehashed); the old one if no room. */
static struct rules *grow(struct rules *t)
{
	struct rules *b;

	if (t->mask + 1 >= MAX_RULES || !(b = new_table((t->mask + 1) * 2)))
		return t;
	b->gen = t->gen;
	for (uint32_t i = 0; i <= t->mask; i++) {
		uint32_t j;

		if (!t->e[i].pc)
			continue;
		for (j = slot_of(t->e[i].pc, b->mask); b->e[j].pc; j = (j + 1) & b->mask)
			;
		b->e[j] = t->e[i];
		b->used++;
	}
	munmap(t, table_bytes(t->mask + 1));
	return b;
}

/* pc's entry made from eh_frame.c's rule. */
static struct entry entry_of(uint64_t pc)
{
	struct rule r = eh_frame__rule(pc);
	struct entry e = {.pc = pc, .cfa_off = r.cfa_off, .ra_off = r.ra_off, .rbp_off = r.rbp_off};

	if (!r.ok || r.frame == FRAME_SIGNAL || (r.cfa_reg != DW_RSP && r.cfa_reg != DW_RBP))
		e.how = H_OTHER | H_BAD;
	else if (r.ra_how == SAVED_UNDEF)
		e.how = H_OTHER | H_END;
	else if (r.ra_how != SAVED_AT)
		e.how = H_OTHER | H_BAD;
	else
		e.how = (r.cfa_reg == DW_RBP ? H_RBP_BASE : 0) |
			(r.rbp_how == SAVED_AT	   ? H_RBP_SAVED
			 : r.rbp_how == SAVED_SAME ? 0
						   : H_RBP_LOST) |
			(r.frame == FRAME_PLT ? H_OTHER | H_PLT : 0);
	e.plt_ge = r.plt_ge;
	return e;
}

/* The entry of pc, not in the table: made and kept (in *spare when the table is full). */
static __attribute__((noinline)) const struct entry *entry_miss(struct rules **tp, uint64_t pc,
								struct entry *spare)
{
	struct rules *t = *tp;
	uint32_t i;

	*spare = entry_of(pc);
	if (t->used + 1 > (t->mask + 1) / 2) {
		*tp = t = grow(t);
		if (t->used + 1 > (t->mask + 1) / 2)
			return spare;
	}
	for (i = slot_of(pc, t->mask); t->e[i].pc; i = (i + 1) & t->mask)
		;
	t->e[i] = *spare;
	t->used++;
	return &t->e[i];
}

/* Find the calling thread's stack and table (its allocations pass through: the guard is up).
 * Not in a sample: the program may hold the thread's lock (pthread_getattr_np's). */
static void learn_thread(void)
{
	pthread_attr_t a;
	void *addr;
	size_t size;

	stack_hi = 1;
	if (key_state > 0 && !table && (table = new_table(MIN_RULES)))
		pthread_setspecific(exit_key, table);
	if (pthread_getattr_np(pthread_self(), &a))
		return;
	if (!pthread_attr_getstack(&a, &addr, &size) && addr && size) {
		stack_lo = (uintptr_t)addr;
		stack_hi = (uintptr_t)addr + size;
	}
	pthread_attr_destroy(&a);
}

void memory_stack__thread_start(void)
{
	if (stack_hi || key_state <= 0)
		return;
	memory__guard_up(); /* what glibc allocates meanwhile is not the program's */
	learn_thread();
	memory__guard_down();
}

/*
 * Walk from the frame of pc (sp, bp: its CFA and rbp) over the live stack
 * [lo, hi) with the rules of *tp, and store into out (at most max) the
 * return addresses from the frame that returns to ret on, operator new's
 * frames at its start left out; the frames before it (ours) are only
 * walked, 24 at most. Returns the entries stored, -1 when ret was not among
 * the frames, or 0 when the walk did not end at the outermost frame nor as
 * deep as asked. An rbp not known (neither saved nor kept, or saved outside
 * the stack) is 0: a CFA from it is then outside the stack, which ends the
 * walk.
 */
static int walk(struct rules **tp, uint64_t pc, uint64_t sp, uint64_t bp, uint64_t lo, uint64_t hi,
		uint64_t ret, uint64_t *out, int max)
{
	uint64_t room = hi - lo - 8;
	struct rules *t = *tp;
	struct entry spare;
	int n = 0, skip = 0;

	for (;;) {
		const struct entry *e;
		uint64_t cfa, at, look = pc - 1; /* the call, not what follows it */
		unsigned how;

		if (n) {
			out[n++] = pc;
			if (n >= max)
				break; /* as deep as asked */
		} else if (pc == ret) {
			out[n++] = pc;
			if (n >= max && !memory_stack__in_new(pc - 1))
				break; /* inside operator new: its caller is the frame */
		} else if (++skip > 24) {
			*tp = t;
			return -1;
		}
		for (uint32_t i = slot_of(look, t->mask);; i = (i + 1) & t->mask) {
			e = &t->e[i];
			if (e->pc == look)
				break;
			if (!e->pc) {
				e = entry_miss(&t, look, &spare);
				break;
			}
		}
		how = e->how;
		cfa = (how & H_RBP_BASE ? bp : sp) + (uint64_t)(int64_t)e->cfa_off;
		if (__builtin_expect(how & H_OTHER, 0)) {
			if (how & H_END)
				break; /* the outermost frame */
			if (how & H_BAD)
				goto cut;
			if ((pc & 15) >= e->plt_ge) /* H_PLT */
				cfa += 8;
		}
		at = cfa + (uint64_t)(int64_t)e->ra_off;
		if (at - lo > room || cfa <= sp)
			goto cut; /* outside the stack, or not towards the caller */
		sp = cfa;
		pc = *(const uint64_t *)at;
		if (how & H_RBP_SAVED) {
			at = cfa + (uint64_t)(int64_t)e->rbp_off;
			bp = at - lo <= room ? *(const uint64_t *)at : 0;
		} else if (how & H_RBP_LOST) {
			bp = 0;
		}
		if (pc < 4096)
			goto cut;
		if (n == 1 && memory_stack__in_new(out[0] - 1))
			n = 0, ret = pc; /* operator new's caller allocated */
	}
	*tp = t;
	return n ? n : -1;
cut:
	*tp = t;
	return 0;
}

/*
 * The allocation's stack into out (at most max): the return addresses from
 * the frame that returns to ret (the allocator's caller) on, operator new's
 * frames left out. Returns the entries stored, -1 when ret is not on the
 * stack, or 0 when this walk cannot be trusted to be libunwind's (then the
 * caller walks with libunwind). Not async-signal-safe.
 */
__attribute__((noinline)) int memory_stack__chain(uint64_t ret, uint64_t *out, int max)
{
	/* this function's frame, kept by the frame pointer: its caller's pc, CFA and rbp */
	const uint64_t *frame = __builtin_frame_address(0);
	uint64_t gen, sp = (uintptr_t)(frame + 2);
	int n;

	if (__builtin_expect(!stack_hi, 0))
		stack_hi = 1; /* a thread not started by the library: libunwind walks its samples */
	if (!table || table == DEAD || sp <= stack_lo || sp >= stack_hi || max < 1 ||
	    !objects__enter())
		return 0; /* objects__enter: no dlclose unmaps the unwind tables meanwhile */
	gen = objects__generation();
	if (table->gen != gen) { /* an object came or went: its pcs' rules may have changed */
		if (table->used) /* (a table as mapped is empty: its pages untouched stay so) */
			memset(table->e, 0, (size_t)(table->mask + 1) * sizeof(table->e[0]));
		table->used = 0;
		table->gen = gen;
	}
	n = walk(&table, frame[1], sp, frame[0], sp, stack_hi, ret, out, max);
	objects__leave();
	__asm__ volatile("" ::: "memory"); /* not a tail call: our frame must stay */
	return n;
}

#else

void memory_stack__init(void)
{
}

int memory_stack__chain(uint64_t ret, uint64_t *out, int max)
{
	(void)ret, (void)out, (void)max;
	return 0;
}

void memory_stack__thread_start(void)
{
}

#endif
