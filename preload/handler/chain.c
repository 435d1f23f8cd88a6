/* SPDX-License-Identifier: MIT */
/*
 * chain.c - the call chain of one sample: the kernel's (fp mode, kernel
 * frames), libunwind's walk of the interrupted stack for the newest sample,
 * or a batched sample's stack copy walked with .eh_frame rules (cfi.c); a
 * sample of the handler's own work gets the interrupted program's stack
 * below its frames, and the profiler's own frames are taken out.
 * Async-signal-safe throughout.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "drain.h"

/*
 * Unwind the interrupted user stack into out; returns the frames stored (0:
 * none). With AUTOPROF_VERBOSE the unwind's CPU time is added up (thread CPU
 * time, so a thread preempted mid-unwind is not charged for the wait).
 */
int chain__unwind_user(struct ap_thread *t, void *ucontext, uint64_t *out, unsigned depth)
{
	uint64_t t0 = t->sampler->measure_unwind ? ap_thread_cpu_ns() : 0; /* a system call */
	bool slow;
	int got = unwind__stack(ucontext, out, (int)depth,
				(void **)(t->scratch + AP_RING_COPY_BYTES + AP_CHAIN_BYTES),
				AP_TRACE_ENTRIES, &slow);

	t->stats.unwind_slow += slow;
	if (t0) {
		t->stats.unwind_ns += ap_thread_cpu_ns() - t0;
		t->stats.unwinds++;
	}
	return got;
}

/* A batched sample's user registers and stack copy (PERF_SAMPLE_REGS_USER, _STACK_USER). */
struct stack_copy {
	uint64_t ip, sp, bp;
	const void *data;
	uint64_t size; /* bytes copied (dyn_size); 0: none */
};

/*
 * Find the registers and stack copy in a batched SAMPLE of body bytes;
 * false when it has none (a kernel thread's, or cut short).
 * Async-signal-safe.
 */
static bool find_stack_copy(const struct ap_thread *t, const struct kernel_sample *s, size_t body,
			    struct stack_copy *c)
{
	const char *p = (const char *)s, *end = p + body;
	uint64_t abi, size, dyn;

	p += offsetof(struct kernel_sample, nr);
	if (t->sampler->sample_type & PERF_SAMPLE_CALLCHAIN) {
		if (end - p < 8 || s->nr > (uint64_t)(end - p - 8) / 8)
			return false;
		p += 8 + s->nr * 8;
	}
	if (end - p < 8)
		return false;
	memcpy(&abi, p, 8);
	p += 8;
	if (abi == PERF_SAMPLE_REGS_ABI_NONE)
		return false;
	if (end - p < 3 * 8 + 8)
		return false;
	memcpy(&c->bp, p, 8); /* in bit order: bp (6), sp (7), ip (8) */
	memcpy(&c->sp, p + 8, 8);
	memcpy(&c->ip, p + 16, 8);
	p += 24;
	memcpy(&size, p, 8);
	p += 8;
	if (size == 0 || size > (uint64_t)(end - p) || (uint64_t)(end - p) - size < 8)
		return false;
	c->data = p;
	memcpy(&dyn, p + size, 8);
	c->size = dyn < size ? dyn : size;
	return true;
}

/* The main thread's stack known mapped, [main_lo, main_hi): from the start's
 * sp to the page above __libc_stack_end, lowered as its sp is seen lower
 * (main_stack_has()); 0: unknown. Written by the main thread only. */
static uint64_t main_lo, main_hi;

extern void *__libc_stack_end; /* glibc's: argc's slot as the kernel left it */

/* At start, on the main thread, outside any handler: its stack for live_program(). */
void chain__set_main_stack(void)
{
	main_lo = (uint64_t)(uintptr_t)__builtin_frame_address(0) & ~(uint64_t)4095;
	main_hi = ((uint64_t)(uintptr_t)__libc_stack_end + 4095) & ~(uint64_t)4095;
	/* (not from another thread's stack: a library loaded late) */
	if (raw_syscall(SYS_gettid, 0, 0, 0, 0, 0, 0) !=
		raw_syscall(SYS_getpid, 0, 0, 0, 0, 0, 0) ||
	    main_lo >= main_hi || main_hi - main_lo > (64ULL << 20))
		main_lo = main_hi = 0;
}

/*
 * Is every byte from sp to the main stack's top mapped? Above main_lo, known;
 * within 1 MiB below it, asked of the kernel (mincore fails on any hole: sp
 * on another stack below the main one, a foreign mapping in between) and
 * main_lo lowered. The walk then reads only there. Async-signal-safe.
 */
static bool main_stack_has(uint64_t sp)
{
	unsigned char vec[256];
	uint64_t page = sp & ~(uint64_t)4095;

	if (!main_hi || sp >= main_hi)
		return false;
	if (sp >= main_lo)
		return true;
	if (main_lo - page > sizeof(vec) * 4096 ||
	    raw_syscall(SYS_mincore, page, main_lo - page, vec, 0, 0, 0) != 0)
		return false;
	main_lo = page;
	return true;
}

/*
 * The program's stack from the signal context into ctx->prog, walked with
 * .eh_frame rules (cfi.c) on the live stack, where a batched sample taken
 * before the handler was entered had its copy made from an sp at or below
 * the one the signal interrupted (ctx->live_lo/hi): the kernel read those
 * bytes then, the stack is still mapped there and does not change while
 * the handler runs; or, on the main thread, up to the top of its stack
 * where all of it is known mapped (main_stack_has). So libunwind need not
 * walk it by DWARF steps (a batched thread makes no fast-trace table, and a
 * batched process of one thread does not set libunwind up: unwind.c).
 * Returns the frames of a whole walk, else 0. Async-signal-safe.
 */
static int live_program(struct drain_ctx *ctx)
{
	unsigned depth = ctx->t->sampler->stack_depth;
	struct cfi_walk w;
	uint64_t sp, hi;
	int got;

	if (!ctx->ucontext)
		return 0;
	sp = unwind__sp(ctx->ucontext);
	if (ctx->t->tid == (pid_t)ctx->t->sampler->pid && main_stack_has(sp))
		hi = main_hi; /* the main thread on its stack: all of it */
	else if (ctx->live_hi && sp >= ctx->live_lo && sp < ctx->live_hi)
		hi = ctx->live_hi;
	else
		return 0;
	if (!objects__enter())
		return 0;
	got = cfi__unwind(AP_CFI_CACHE(ctx->t), unwind__pc(ctx->ucontext), sp,
			  unwind__bp(ctx->ucontext), (const void *)(uintptr_t)sp, hi - sp,
			  ctx->prog, (int)depth, &w);
	objects__leave();
	return got > 0 && w.complete ? got : 0;
}

/*
 * The interrupted program's stack, unwound from the signal context the first
 * time a drain needs it (the program has not run since the handler was
 * entered): on the live stack (live_program()), else by libunwind; returns
 * its frames in ctx->prog, 0 when unknown. Async-signal-safe.
 */
int chain__program_stack(struct drain_ctx *ctx)
{
	if (ctx->prog_n < 0) {
		int n = chain__program_stack_live(ctx);

		if (!n && ctx->prog)
			n = chain__unwind_user(ctx->t, ctx->ucontext, ctx->prog,
					       ctx->t->sampler->stack_depth);
		ctx->prog_n = n > 0 ? n : 0;
	}
	return ctx->prog_n;
}

/* chain__program_stack()'s walk on the live stack only (live_program()): 0 where that
 * walk cannot be made (kept unknown: chain__program_stack() then tries libunwind), and no
 * libunwind. Async-signal-safe. */
int chain__program_stack_live(struct drain_ctx *ctx)
{
	if (ctx->prog_n < 0) {
		int n = ctx->prog ? live_program(ctx) : 0;

		if (n > 0)
			ctx->prog_n = n;
		return n > 0 ? n : 0;
	}
	return ctx->prog_n;
}

/* Append n frames of prog to out at `at`, up to limit entries; returns the new end. */
static int append_frames(uint64_t *out, int at, int limit, const uint64_t *prog, int n)
{
	for (int i = 0; i < n && at < limit; i++)
		out[at++] = prog[i];
	return at;
}

/*
 * Whether a sample taken at time, on the handler's own stack, belongs to the
 * handler's previous run, whose program stack t keeps (keep_program()): one
 * taken between its entry and the end of its work on that stack.
 * Async-signal-safe.
 */
static bool in_kept(const struct ap_thread *t, uint64_t time)
{
	return t->kept_n > 0 && time >= t->kept_from && time <= t->kept_to;
}

/*
 * The program's stack below a sample of the handler's own work taken at
 * time: the one this handler interrupted (a sample taken since it was
 * entered), or the one kept by its previous run (in_kept()). Returns it
 * with its frames in *n and the signal trampoline the handler returns to in
 * *restorer, or NULL. Async-signal-safe.
 */
static const uint64_t *handler_program(struct drain_ctx *ctx, uint64_t time, int *n,
				       uint64_t *restorer)
{
	struct ap_thread *t = ctx->t;

	if (ctx->entered && time >= ctx->entered) {
		*n = chain__program_stack(ctx);
		*restorer = unwind__restorer(ctx->ucontext);
		return *n > 0 ? ctx->prog : NULL;
	}
	if (in_kept(t, time)) {
		*n = t->kept_n;
		*restorer = t->kept_restorer;
		return AP_PROG(t, t->kept);
	}
	return NULL;
}

/*
 * A sample of the handler's own work: its walk (got frames at out) ends at
 * the switch to the handler's own stack (handler_program(): the signal
 * trampoline is added there, as a walk through the signal frame shows it),
 * or at a signal frame whose interrupted sp and pc are this handler's or
 * its previous run's (taken on the way in or out). The program's stack of
 * that run goes on from there: true when it was spliced in (*got updated).
 * Async-signal-safe.
 */
static bool splice_program(struct drain_ctx *ctx, uint64_t time, const struct cfi_walk *w,
			   uint64_t *out, int *got, unsigned depth)
{
	const struct ap_thread *t = ctx->t;
	const uint64_t *prog = NULL;
	uint64_t restorer = 0;
	int at = *got, n = 0;

	if (w->complete)
		return false;
	if (!w->signal_uc) {
		prog = handler_program(ctx, time, &n, &restorer);
		if (prog && restorer && at < (int)depth)
			out[at++] = restorer;
	} else if (w->signal_at < *got) {
		at = w->signal_at;
		if (ctx->entered && w->signal_uc == (uintptr_t)ctx->ucontext &&
		    w->signal_sp == unwind__sp(ctx->ucontext) &&
		    out[at] == unwind__pc(ctx->ucontext)) {
			n = chain__program_stack(ctx);
			prog = n > 0 ? ctx->prog : NULL;
		} else if (t->kept_n > 0 && w->signal_sp == t->kept_sp && out[at] == t->kept_pc) {
			n = t->kept_n;
			prog = AP_PROG(t, t->kept);
		}
	}
	if (!prog)
		return false;
	*got = append_frames(out, at, (int)depth, prog, n);
	return true;
}

/*
 * Unwind a batched sample's user stack from its copy into out (cfi.c), the
 * drain holding the object table (ctx->objects: else a dlclose is unmapping
 * and no object may be read); returns the frames stored, 0 when it cannot
 * be. A sample of the handler's own work gets the program's stack below its
 * frames (splice_program). A walk that ends short of the outermost frame is
 * kept and counted (unwind_short), and one that ran off the copy's end
 * counts towards larger copies; the others' reach towards smaller ones.
 * Async-signal-safe.
 */
static bool own_pc(uint64_t pc, unsigned kinds);

/* Did walk w cross a signal frame of the profiler's own handler (a sample of its entry)? */
static bool through_own_handler(const struct cfi_walk *w, const uint64_t *out)
{
	for (int i = 0; w->signal_uc && i < w->signal_at; i++)
		if (own_pc(out[i], AP_OBJ_SELF))
			return true;
	return false;
}

static pid_t profiler_tid; /* chain__profiler_work() */

static int unwind_copy(struct drain_ctx *ctx, uint64_t time, const struct stack_copy *c,
		       uint64_t *out, unsigned depth)
{
	struct ap_thread *t = ctx->t;
	uint64_t t0 = t->sampler->measure_unwind ? ap_thread_cpu_ns() : 0; /* a system call */
	struct cfi_walk w;
	uint64_t reach;
	bool own, spliced, counted;
	int got;

	if (!ctx->objects) {
		objects__skipped();
		return 0;
	}
	if (ctx->entered && time < ctx->entered && c->size) { /* (live_program()) */
		ctx->live_lo = c->sp;
		ctx->live_hi = c->sp + c->size;
	}
	got = cfi__unwind(AP_CFI_CACHE(t), c->ip, c->sp, c->bp, c->data, c->size, out, (int)depth,
			  &w);
	/* the profiler's start or end (left out: drop_own_frames): its deep frames size no copy
	 * (under load they grew a thread's copies to 32 KB, its ring to 257 pages, at start) */
	counted = t->tid != __atomic_load_n(&profiler_tid, __ATOMIC_ACQUIRE);
	spliced = splice_program(ctx, time, &w, out, &got, depth);
	own = !spliced && through_own_handler(&w, out); /* (only an unspliced walk asks) */
	if (!spliced) {
		bool off = w.ran_out && c->size >= t->copy_bytes;

		t->stats.unwind_short += got > 0 && !w.complete;
		t->copy_samples++;
		/* Not a sample of the handler's entry, before it left the
		 * program's stack: the walk crosses a signal frame of
		 * AT_MINSIGSTKSZ or more (3376 bytes on this VM's AVX-512)
		 * before the program's frames; copies four times as large
		 * for every thread, for 3 in 10,000 samples, were the price. */
		t->copy_short += counted && off && !own;
		/* A plain walk deeper than the copy (not one through a signal frame,
		 * which run off any copy, nor one that went to another stack): no
		 * smaller copies, and restore a larger one (on_signal.c). */
		if (counted && off && !w.signal_uc && w.need <= AP_MAX_STACK_COPY)
			t->copy_reach = UINT_MAX;
	}
	/* What the copies must hold: a sample of the handler's own work, its frames up to its
	 * signal frame's registers at most (the program's stack below them is spliced in, or
	 * matched by time on the handler's own stack: nothing of the copy); one of its entry
	 * (a sample the splice did not match), as much, its program frames past them lost
	 * when the copies are smaller. Counted whole, their handler frames and 3-4 KB of FPU
	 * state kept a loaded machine's copies at 2-6 KB for stacks that need 1 (samples of the
	 * handler grow with the load: 1 in 2048 walks held the copies). */
	reach = spliced ? (w.signal_uc ? w.signal_reach : 0) : own ? w.signal_reach : w.reach;
	if (counted && reach > t->copy_reach)
		t->copy_reach = (unsigned)reach;
	t->copy_window += counted;
	t->stats.copied += c->size;
	if (t0) {
		t->stats.unwind_ns += ap_thread_cpu_ns() - t0;
		t->stats.unwinds++;
	}
	return got;
}

/*
 * Is pc in the profiler's code: this library, or libunwind when it is ours
 * that calls it (`kinds`: AP_OBJ_SELF, plus AP_OBJ_UNWINDER when a frame of
 * ours is in the chain; a program's own use of libunwind stays)?
 * Async-signal-safe.
 */
static bool own_pc(uint64_t pc, unsigned kinds)
{
	return pc < PERF_CONTEXT_MAX && (objects__kind((uintptr_t)pc) & kinds);
}

/*
 * The profiler never shows in the profile: take its frames out of a
 * sample's user chain (entries from `user`, after PERF_CONTEXT_USER, to nr),
 * so that the sample is charged to the program frame it interrupted, as if
 * the profiler had not run there. Two shapes:
 *  - a sample of a handler of ours: its frames (with at most one frame of a
 *    library it called at the top: libc's pwritev, memcpy) down to the signal
 *    trampoline the kernel made for it: all of that goes, and the chain
 *    starts at the interrupted pc (under it, the program's stack);
 *  - any other frame of ours (a wrapper of a libc function the program
 *    called, offcpu__end in it, the start routine of a thread): that frame
 *    goes, so the program's caller of the interposed function (or the libc
 *    function our wrapper called, as without us) is where the sample lands.
 * A chain left with no user frame (the walk never got past our code) is the
 * profiler's alone: 0 is returned and the caller leaves the sample out,
 * counted (own_only), also when only a library function ours called is
 * left (mmap, sysconf); so is one with a frame of ours in the thread that runs
 * the profiler's start or end (chain__profiler_work). Returns the new nr.
 * Async-signal-safe.
 */
/*
 * The thread that runs the library's constructor or its late stop (0: none): its samples
 * with a frame of ours are the profiler's alone, with what our code called (libc's fstatat
 * under call_init was 0.6% of a 20 kHz profile on a loaded machine). Async-signal-safe.
 */
void chain__profiler_work(pid_t tid)
{
	__atomic_store_n(&profiler_tid, tid, __ATOMIC_RELEASE);
}

static unsigned drop_own_frames(struct drain_ctx *ctx, uint64_t *chain, unsigned user, unsigned nr)
{
	static uint64_t seen; /* glibc's __restore_rt, the same for every handler */
	uint64_t trampoline =
	    ctx->ucontext ? unwind__restorer(ctx->ucontext) : ctx->t->kept_restorer;
	const unsigned ours = AP_OBJ_SELF | AP_OBJ_UNWINDER;
	unsigned from = user, to = user, r, k = AP_OBJ_SELF;

	if (trampoline)
		__atomic_store_n(&seen, trampoline, __ATOMIC_RELAXED);
	else
		trampoline = __atomic_load_n(&seen, __ATOMIC_RELAXED);
	/* our handler's frames (and a libc frame they called) down to its trampoline */
	for (r = user + 1; r < nr && own_pc(chain[r], ours);)
		r++;
	if (trampoline && r < nr && chain[r] == trampoline &&
	    (own_pc(chain[user], ours) || r > user + 1))
		from = r + 1;
	for (unsigned i = from; i < nr && k == AP_OBJ_SELF; i++)
		if (own_pc(chain[i], AP_OBJ_SELF))
			k = ours; /* libunwind called by us */
	if (from == user && k == AP_OBJ_SELF)
		/* none of ours, or a walk of our handler that stopped in libunwind */
		return own_pc(chain[nr - 1], AP_OBJ_UNWINDER) ? 0 : nr;
	if (ctx->t->tid == __atomic_load_n(&profiler_tid, __ATOMIC_ACQUIRE))
		return 0; /* the profiler's start or end, and what it called */
	if (own_pc(chain[nr - 1], ours))
		return 0; /* the walk never got past our code: a libc function it called */
	for (unsigned i = from; i < nr; i++)
		if (!own_pc(chain[i], k))
			chain[to++] = chain[i];
	return to == user ? 0 : to;
}

/*
 * A sample's chain (nr entries) without the profiler's frames
 * (drop_own_frames()); *ip becomes the user sample's new first frame.
 * Returns the new nr: 0 when the user part had only frames of ours, also
 * for a kernel sample (the kernel work of the profiler's own system calls:
 * its reads of /proc and its file's writes, getdents64 and ext4 frames under
 * no program frame, were 5-20% of a system-call-heavy program's kernel
 * samples on a loaded machine). Async-signal-safe.
 */
unsigned chain__own_frames_out(struct drain_ctx *ctx, uint64_t *chain, unsigned nr, bool kernel_ip,
			       uint64_t *ip)
{
	unsigned user = 0, left;

	while (user < nr && chain[user] != PERF_CONTEXT_USER)
		user++;
	if (user + 1 >= nr)
		return nr;
	left = drop_own_frames(ctx, chain, user + 1, nr);
	if (left && !kernel_ip)
		*ip = chain[user + 1];
	return left;
}

/*
 * Build the file's callchain for one sample into chain, kernel style:
 * [PERF_CONTEXT_KERNEL, kernel frames...,] PERF_CONTEXT_USER, ip, callers.
 * The kernel part (AUTOPROF_KERNEL) and fp chains come from the kernel's
 * record; libunwind chains from the signal context, which belongs to the
 * newest sample only, or from a batched sample's stack copy; a sample of
 * the handler's own work gets the interrupted program's stack below its
 * frames. Returns the number of entries. Async-signal-safe.
 */
unsigned chain__build(struct drain_ctx *ctx, const struct kernel_sample *s, size_t body,
		      bool kernel_ip, bool last_sample, uint64_t *chain)
{
	struct ap_thread *t = ctx->t;
	void *ucontext = last_sample ? ctx->ucontext : NULL;
	const uint64_t *prog;
	uint64_t restorer;
	struct stack_copy copy;
	unsigned depth = t->sampler->stack_depth;
	unsigned n = 0;
	uint64_t nr = 0;
	int got;

	if (t->sampler->sample_type & PERF_SAMPLE_CALLCHAIN) {
		nr = body >= sizeof(*s) ? s->nr : 0;
		if (nr > (body - sizeof(*s)) / 8)
			nr = 0;
	}
	/* The kernel's chain: all of it in fp mode, else its kernel part. */
	for (uint64_t i = 0; i < nr && n < depth + 2; i++) {
		if (s->ips[i] == PERF_CONTEXT_USER && t->sampler->callgraph != AP_CG_FP)
			break;
		chain[n++] = s->ips[i];
	}
	if (t->sampler->callgraph == AP_CG_FP && n > 0 && (n > 1 || kernel_ip))
		return n;
	if (t->sampler->callgraph == AP_CG_FP)
		n = 0; /* no usable chain: fall back to the ip alone */
	if (kernel_ip && n == 0) {
		chain[n++] = PERF_CONTEXT_KERNEL;
		chain[n++] = s->ip;
	}

	chain[n++] = PERF_CONTEXT_USER;
	if (t->batched && t->sampler->callgraph == AP_CG_LIBUNWIND) {
		/* The signal is the tick's: every sample unwinds from its copy. */
		got = find_stack_copy(t, s, body, &copy)
			  ? unwind_copy(ctx, s->time, &copy, chain + n, depth)
			  : 0;
		if (got > 0 && (kernel_ip || chain[n] == s->ip))
			return n + (unsigned)got;
		t->stats.unwind_skipped++;
	} else if (t->sampler->callgraph == AP_CG_LIBUNWIND && !kernel_ip &&
		   (prog = handler_program(ctx, s->time, &got, &restorer))) {
		/* the handler's own work, whose frames are not known here: its ip,
		 * then the program's */
		chain[n] = s->ip;
		return n + (unsigned)append_frames(chain + n, 1, (int)depth, prog, got);
	} else if (t->sampler->callgraph == AP_CG_LIBUNWIND && ucontext) {
		got = chain__unwind_user(t, ucontext, chain + n, depth);
		/* A user sample's stack is the context's only if it starts at its ip;
		 * a kernel sample's user part is wherever the thread entered the kernel. */
		if (got > 0 && (kernel_ip || chain[n] == s->ip))
			return n + (unsigned)got;
		t->stats.unwind_skipped++;
	} else if (t->sampler->callgraph == AP_CG_LIBUNWIND) {
		t->stats.unwind_short++; /* a sample drained without its signal context */
	}
	if (kernel_ip)
		return n - 1; /* no user part known */
	chain[n++] = s->ip;
	return n;
}
