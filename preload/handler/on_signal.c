/* SPDX-License-Identifier: MIT */
/*
 * on_signal.c - the sampling signal's handler: drain this thread's ring,
 * unwind the interrupted stack for the newest sample, and queue SAMPLE
 * records; a delivery that is not ours goes to the program's disposition.
 *
 * The signal is routed to the thread that owns the event (F_SETOWN_EX), so a
 * handler only ever touches its own thread's state: no locks. It reads what
 * to sample from t->sampler, never from the session.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "handler.h"

#define MAX_RECORD (128 + (AP_MAX_CHAIN + 2) * 8)

struct drain_ctx {
	struct ap_thread *t;
	void *ucontext;
	uint64_t start;	  /* AUTOPROF_COST: when the handler started, else 0 */
	uint64_t entered; /* when the handler was entered (ucontext set), else 0 */
	uint64_t cpu0;	  /* the thread's CPU time then, in 1 run of 4 (pace()), else 0 */
	bool objects;	  /* the drain holds the object table (objects__enter) */
	int prog_n;	  /* frames in prog: -1 until unwound */
	uint64_t *prog;	  /* the interrupted program's stack, AP_MAX_CHAIN entries: the
			   * program stack of t that is not kept (AP_PROG); NULL outside
			   * the handler */
};

/* The time now when AUTOPROF_COST times the phases, else 0. Async-signal-safe. */
static inline uint64_t cost_now(const struct ap_thread *t)
{
	return t->sampler->measure_cost ? ap_now() : 0;
}

/* Add the time since t0 (from cost_now) to phase. Async-signal-safe. */
static inline void cost_add(struct ap_thread *t, enum ap_cost phase, uint64_t t0)
{
	if (t0)
		t->stats.cost[phase] += ap_now() - t0;
}

/* The fields of a kernel SAMPLE in the sample_type event__sampler_attr() asks for. */
struct kernel_sample {
	uint64_t ip;
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu, res;
	uint64_t period;
	uint64_t nr; /* CALLCHAIN: fp mode, or the kernel part with AUTOPROF_KERNEL */
	uint64_t ips[];
};

/*
 * Unwind the interrupted user stack into out; returns the frames stored (0:
 * none). With AUTOPROF_VERBOSE the unwind's CPU time is added up (thread CPU
 * time, so a thread preempted mid-unwind is not charged for the wait).
 */
static int unwind_user(struct ap_thread *t, void *ucontext, uint64_t *out, unsigned depth)
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

/*
 * The interrupted program's stack, unwound from the signal context the first
 * time a drain needs it (the program has not run since the handler was
 * entered); returns its frames in ctx->prog, 0 when unknown. Async-signal-safe.
 */
static int program_stack(struct drain_ctx *ctx)
{
	if (ctx->prog_n < 0) {
		ctx->prog_n = ctx->prog ? unwind_user(ctx->t, ctx->ucontext, ctx->prog,
						      ctx->t->sampler->stack_depth)
					: 0;
		if (ctx->prog_n < 0)
			ctx->prog_n = 0;
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
 * handler's previous run, whose program stack t keeps (keep_program()).
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
		*n = program_stack(ctx);
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
			n = program_stack(ctx);
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
 * counts towards larger copies. Async-signal-safe.
 */
static int unwind_copy(struct drain_ctx *ctx, uint64_t time, const struct stack_copy *c,
		       uint64_t *out, unsigned depth)
{
	struct ap_thread *t = ctx->t;
	uint64_t t0 = t->sampler->measure_unwind ? ap_thread_cpu_ns() : 0; /* a system call */
	struct cfi_walk w;
	int got;

	if (!ctx->objects) {
		objects__skipped();
		return 0;
	}
	got = cfi__unwind(AP_CFI_CACHE(t), c->ip, c->sp, c->bp, c->data, c->size, out, (int)depth,
			  &w);
	if (!splice_program(ctx, time, &w, out, &got, depth)) {
		t->stats.unwind_short += got > 0 && !w.complete;
		t->copy_samples++;
		t->copy_short += w.ran_out && c->size >= t->copy_bytes;
	}
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
 * counted (own_only). Returns the new nr. Async-signal-safe.
 */
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
	for (unsigned i = from; i < nr; i++)
		if (!own_pc(chain[i], k))
			chain[to++] = chain[i];
	return to == user ? 0 : to;
}

/*
 * A sample's chain (nr entries) without the profiler's frames
 * (drop_own_frames()); *ip becomes the user sample's new first frame.
 * Returns the new nr: 0 when a user sample had only frames of ours; a
 * kernel sample keeps its kernel part. Async-signal-safe.
 */
static unsigned own_frames_out(struct drain_ctx *ctx, uint64_t *chain, unsigned nr, bool kernel_ip,
			       uint64_t *ip)
{
	unsigned user = 0, left;

	while (user < nr && chain[user] != PERF_CONTEXT_USER)
		user++;
	if (user + 1 >= nr)
		return nr;
	left = drop_own_frames(ctx, chain, user + 1, nr);
	if (kernel_ip)
		return left ? left : user; /* no user part known */
	if (left)
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
static unsigned build_chain(struct drain_ctx *ctx, const struct kernel_sample *s, size_t body,
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
		got = unwind_user(t, ucontext, chain + n, depth);
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

/* Count one sample written for t (totals, time range). Async-signal-safe. */
static void account(struct ap_thread *t, uint64_t time, uint64_t period, unsigned frames)
{
	t->stats.samples++;
	t->stats.period_sum += period;
	t->stats.frames += frames;
	if (!t->stats.first_time)
		t->stats.first_time = time;
	t->stats.last_time = time;
}

/*
 * True for the name of a mapping that is no object file: //anon, /dev/zero,
 * /anon_hugepage, /SYSV..., /memfd:..., [heap], [anon:...] (JIT code, named
 * through /tmp/perf-PID.map by the readers), or a jitdump's .../jit-PID.dump.
 * Async-signal-safe.
 */
static bool anon_name(const char *name, size_t len)
{
	static const char *const prefixes[] = {"//anon", "/dev/zero", "/anon_hugepage", "/SYSV",
					       "/memfd:"};

	const char *base = name + len;

	if (!len || name[0] != '/')
		return true;
	/* A jitdump's marker mapping (node --perf-prof, the JVM's agents):
	 * perf inject --jit finds the dump through it. */
	while (base > name && base[-1] != '/')
		base--;
	if (name + len - base > 9 && !memcmp(base, "jit-", 4) &&
	    !memcmp(name + len - 5, ".dump", 5))
		return true;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t n = strlen(prefixes[i]);

		if (len >= n && !memcmp(name, prefixes[i], n))
			return true;
	}
	return false;
}

/*
 * The kernel's MMAP2 of an executable mapping this thread made (attr.mmap2):
 * copied into out in the file's format when the mapping is anonymous (JIT
 * code); file-backed ones are written by objects.c with their build ids.
 * The kernel record ends with the sample_id trailer (TID, TIME, CPU) of
 * event__sampler_attr(). Returns the bytes written, 0 for none.
 * Async-signal-safe.
 */
static size_t copy_anon_mmap2(char *out, size_t cap, const struct perf_event_header *rec)
{
	const struct perf_record_mmap2 *m = (const void *)rec;
	const size_t trailer = 3 * sizeof(uint64_t);
	size_t name_len;
	uint64_t time;

	if (rec->size < sizeof(*m) + trailer || !(m->prot & PROT_EXEC))
		return 0;
	name_len = strnlen(m->filename, rec->size - sizeof(*m) - trailer);
	if (!anon_name(m->filename, name_len) || name_len == rec->size - sizeof(*m) - trailer)
		return 0;
	memcpy(&time, (const char *)rec + rec->size - 2 * sizeof(uint64_t), sizeof(time));
	return record__mmap2(out, cap, m->pid, m->start, m->len, m->pgoff, m->maj, m->min, m->ino,
			     m->prot, m->flags, name_len ? m->filename : "//anon", time, NULL, 0);
}

static void on_record(void *arg, const struct perf_event_header *rec, bool last_sample)
{
	struct drain_ctx *ctx = arg;
	struct ap_thread *t = ctx->t;
	uint64_t *chain = (uint64_t *)(t->scratch + AP_RING_COPY_BYTES);
	char *out = buffer__reserve(t, MAX_RECORD);
	size_t n = 0, body = rec->size - sizeof(*rec);

	switch (rec->type) {
	case PERF_RECORD_SAMPLE: {
		const struct kernel_sample *s = (const void *)(rec + 1);
		uint64_t t0, ip = s->ip;
		bool kernel_ip;
		unsigned nr;

		if (body < offsetof(struct kernel_sample, nr))
			return;
		kernel_ip = (rec->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
		if (last_sample && ctx->start && s->time < ctx->start)
			t->stats.cost[AP_COST_DELAY] += ctx->start - s->time;
		t0 = cost_now(t);
		nr = build_chain(ctx, s, body, kernel_ip, last_sample, chain);
		nr = own_frames_out(ctx, chain, nr, kernel_ip, &ip);
		cost_add(t, AP_COST_UNWIND, t0);
		if (!nr) {
			t->stats.own_only++;
			return;
		}
		t0 = cost_now(t);
		if (ctx->objects)
			objects__note_held(t, chain,
					   nr); /* MMAP2 records of objects loaded since */
		cost_add(t, AP_COST_NOTE, t0);
		t0 = cost_now(t);
		out = buffer__reserve(t, MAX_RECORD);
		n = record__sample(out, MAX_RECORD, kernel_ip, kernel_ip ? s->ip : ip, s->pid,
				   s->tid, s->time, s->cpu, s->period, chain, nr);
		n = aggregate__fold(t, out, n); /* AUTOPROF_AGGREGATE: merged, or kept */
		account(t, s->time, s->period, nr - 1);
		cost_add(t, AP_COST_RECORD, t0);
		t->stats.cost[AP_COST_SAMPLES] += ctx->start != 0;
		break;
	}
	case PERF_RECORD_LOST: {
		const struct perf_record_lost *l = (const void *)rec;

		if (rec->size < sizeof(*l))
			return;
		t->stats.lost += l->lost;
		n = record__lost(out, MAX_RECORD, t->sampler->pid, (uint32_t)t->tid,
				 t->stats.last_time, l->lost);
		break;
	}
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE: {
		const struct perf_record_throttle *th = (const void *)rec;

		if (rec->size < sizeof(*th))
			return;
		t->stats.throttles += rec->type == PERF_RECORD_THROTTLE;
		n = record__throttle(out, MAX_RECORD, rec->type, t->sampler->pid, (uint32_t)t->tid,
				     th->time);
		break;
	}
	case PERF_RECORD_MMAP2:
		n = copy_anon_mmap2(out, MAX_RECORD, rec);
		break;
	default:
		return;
	}
	t->len += n;
}

/*
 * A sample made from the signal context alone (the timer source): the
 * interrupted pc and its stack, at `time`, with its true period.
 * Async-signal-safe.
 */
void sample__from_context(struct ap_thread *t, void *ucontext, uint64_t time, uint32_t cpu,
			  uint64_t period)
{
	uint64_t *chain = (uint64_t *)(t->scratch + AP_RING_COPY_BYTES);
	char *out = buffer__reserve(t, MAX_RECORD);
	unsigned nr = 1;
	int got = 0;

	chain[0] = PERF_CONTEXT_USER;
	if (t->sampler->callgraph != AP_CG_NONE)
		got = unwind_user(t, ucontext, chain + 1, t->sampler->stack_depth);
	if (got <= 0) {
		chain[1] = unwind__pc(ucontext);
		got = 1;
		if (t->sampler->callgraph != AP_CG_NONE)
			t->stats.unwind_skipped++;
	}
	nr += (unsigned)got;
	{
		struct drain_ctx a = {.t = t, .ucontext = ucontext, .prog_n = -1};
		uint64_t ip = chain[1];

		nr = own_frames_out(&a, chain, nr, false, &ip);
		if (!nr) {
			t->stats.own_only++;
			return;
		}
	}
	objects__note(t, chain, nr);
	out = buffer__reserve(t, MAX_RECORD);
	t->len += aggregate__fold(t, out,
				  record__sample(out, MAX_RECORD, false, chain[1], t->sampler->pid,
						 (uint32_t)t->tid, time, cpu, period, chain, nr));
	account(t, time, period, nr - 1);
	buffer__maybe_flush(t);
}

/* The drains of a thread's ramp (a tick at every sample) after its copies last grew. */
#define AP_RAMP_DRAINS 16

/*
 * After a drain of a batched thread: a thread whose stacks are deeper than
 * its copies gets an event with copies four times as large, up to the
 * kernel's limit: during its ramp (its first samples, drained one at a
 * time), at its first walk that ran off the end; then at 3 or more such
 * walks that are more than 1 in 128 of its walks (at 1 in 32, demo's deep
 * qsort recursions kept 1.6% of its stacks short of main for good). The
 * ramp ends after AP_RAMP_DRAINS drains since the copies last grew. So a
 * program whose stacks deepen as it starts (python3's imports need 8-32 KB)
 * loses a few walks, not its first batches. From the handler only. Async-signal-safe.
 */
static void adapt_batch(struct ap_thread *t)
{
	bool ramping = t->ramp.page != NULL;

	if (!t->batched)
		return;
	if (t->copy_short > 0 && t->copy_bytes < t->copy_max &&
	    (ramping || (t->copy_short >= 3 && t->copy_short * 128 >= t->copy_samples))) {
		sampler_events__grow_copy(t);
		t->copy_samples = t->copy_short = 0;
		t->ramp_drains = 0;
		return;
	}
	if (ramping && ++t->ramp_drains >= AP_RAMP_DRAINS)
		sampler_events__end_ramp(t);
}

/*
 * Move every record in t's ring into t's buffer (the newest sample gets the
 * stack unwound from ucontext, NULL outside a handler), holding the object
 * table once for all of them, then adapt a batched thread's copies and tick
 * (in a handler) and flush. The samples taken meanwhile (of the handler's
 * own work, the flush's write above all) are moved at the next drain, with
 * the program's stack the handler keeps for them (keep_program()). With
 * AUTOPROF_COST (ctx->start) the flush and the whole handler are timed.
 * Async-signal-safe.
 */
static void drain(struct drain_ctx *ctx)
{
	struct ap_thread *t = ctx->t;
	uint64_t t0;

	ctx->objects = objects__enter();
	ring__drain(&t->ring, t->scratch, AP_RING_COPY_BYTES, on_record, ctx);
	if (ctx->objects)
		objects__leave();
	if (ctx->ucontext)
		adapt_batch(t);
	t0 = ctx->start ? ap_now() : 0;
	buffer__maybe_flush(t);
	cost_add(t, AP_COST_FLUSH, t0);
	if (ctx->start) {
		t->stats.cost[AP_COST_HANDLERS]++;
		cost_add(t, AP_COST_HANDLER, ctx->start);
	}
}

/* Drain t's ring, outside its handler or in it (see drain()). Async-signal-safe. */
void sample__drain(struct ap_thread *t, void *ucontext)
{
	struct drain_ctx ctx = {.t = t, .ucontext = ucontext, .prog_n = -1};

	drain(&ctx);
}

/*
 * After the handler's pass over the ring: samples taken since (the ring is
 * not empty: the flush's write, the handler's own work) are drained at the
 * next signal, when the program has moved on, so keep the stack this
 * handler interrupted, with the handler's time span and the registers it
 * interrupted, for them (handler_program(), splice_program()); also when it
 * was unwound anyway, for a sample taken after the look at the ring. The
 * stack kept before is no longer needed: the samples of that run were all
 * in the ring before this handler's, and drained in its pass.
 * Async-signal-safe.
 */
static void keep_program(struct drain_ctx *ctx)
{
	struct ap_thread *t = ctx->t;

	if (ctx->prog_n < 0 && !ring__pending(&t->ring)) {
		t->kept_n = 0;
		return;
	}
	t->kept_n = program_stack(ctx);
	t->kept = ctx->prog == AP_PROG(t, 1);
	t->kept_from = ctx->entered;
	t->kept_to = ap_now();
	t->kept_restorer = unwind__restorer(ctx->ucontext);
	t->kept_sp = unwind__sp(ctx->ucontext);
	t->kept_pc = unwind__pc(ctx->ucontext);
}

/*
 * The backoff: a window of at least PACE_WINDOW_NS and PACE_MIN_CPU_NS of
 * the thread's CPU time; the thread's rate halves (sampler_events__slow_down) when
 * in a window its handlers took more than PACE_HANDLER_PCT of its CPU time
 * (the default of the kernel's own limit for its sampling interrupts,
 * kernel.perf_cpu_time_max_percent, which the kernel does not apply to
 * cpu-clock), or its handlers and its system time more than
 * PACE_OVERHEAD_PCT (the kernel's part of a sample: the timer interrupt,
 * the stack copy, the signal). Else a rate the handler cannot follow feeds
 * on itself: the handler's own time is sampled too, and the program stops
 * making progress.
 */
#define PACE_WINDOW_NS	  100000000ULL
#define PACE_MIN_CPU_NS	  20000000ULL
#define PACE_HANDLER_PCT  25
#define PACE_OVERHEAD_PCT 75

static uint64_t tv_ns(struct timeval tv)
{
	return (uint64_t)tv.tv_sec * 1000000000ULL + (uint64_t)tv.tv_usec * 1000ULL;
}

/* After a handler run of t (its CPU time at entry in cpu0, or 0): the backoff. Async-signal-safe.
 */
static void pace(struct ap_thread *t, uint64_t cpu0)
{
	uint64_t now = ap_now(), cpu = 0, sys, user;
	struct rusage ru;

	if (cpu0) {
		cpu = ap_thread_cpu_ns(); /* a system call */
		t->win_busy += 4 * (cpu - cpu0);
	}
	if (t->win_start && now - t->win_start < PACE_WINDOW_NS)
		return;
	if (!cpu)
		cpu = ap_thread_cpu_ns();
	if (ap_syscall(SYS_getrusage, RUSAGE_THREAD, &ru) < 0)
		return;
	sys = tv_ns(ru.ru_stime);
	user = tv_ns(ru.ru_utime);
	if (t->win_start) {
		uint64_t d = cpu - t->win_cpu, ds = sys - t->win_sys;
		uint64_t dt = ds + (user - t->win_user); /* tick-sampled: for the share only */

		if (d < PACE_MIN_CPU_NS)
			return;
		ds = dt ? (uint64_t)((double)d * (double)ds / (double)dt) : 0;
		if ((t->win_busy * 100 > d * PACE_HANDLER_PCT ||
		     (t->win_busy + ds) * 100 > d * PACE_OVERHEAD_PCT) &&
		    sampler_events__slow_down(t))
			t->stats.slowdowns++;
	}
	t->win_start = now;
	t->win_cpu = cpu;
	t->win_sys = sys;
	t->win_user = user;
	t->win_busy = 0;
}

/* The handler's work, on its own stack (own_stack.c); arg is a struct drain_ctx. */
static void drain_on_stack(void *arg)
{
	struct drain_ctx *ctx = arg;

	/* this run's program stack goes where it does not overwrite the kept one */
	ctx->prog = AP_PROG(ctx->t, !ctx->t->kept);
	drain(ctx);
	keep_program(ctx);
	pace(ctx->t, ctx->cpu0);
}

static void timer_on_stack(void *arg)
{
	struct drain_ctx *a = arg;

	cputimer__sample(a->t, a->ucontext);
}

/*
 * Another signal waits behind ours (a SIGTERM, a Ctrl-C, a program's
 * SIGCHLD): the kernel hands out a thread's own pending signals before the
 * process's, and our notifications are the thread's own, so on a loaded
 * machine, where the queue refills as fast as the handler runs, they held a
 * SIGTERM back for seconds. The ring was just drained: the notifications
 * still queued on this thread carry nothing it does not hold, so take them
 * out (the next sample brings a new one); a signal of the program's on this
 * number (or a ctl request) goes where the handler sends it. Only signals
 * the interrupted code does not block count (a program may keep one blocked
 * and pending for long). Async-signal-safe.
 */
static void make_way(int signo, void *ucontext)
{
	const struct timespec zero = {0, 0};
	sigset_t pending, one;
	siginfo_t si;

	if (ap_syscall(SYS_rt_sigpending, &pending, _NSIG / 8) < 0)
		return;
	for (int s = 1; s < _NSIG; s++)
		if (s == signo || sigismember(&((ucontext_t *)ucontext)->uc_sigmask, s))
			sigdelset(&pending, s);
	if (sigisemptyset(&pending))
		return;
	sigemptyset(&one);
	sigaddset(&one, signo);
	for (int i = 0; i < 65536; i++) {
		if (ap_syscall(SYS_rt_sigtimedwait, &one, &si, &zero, _NSIG / 8) != signo)
			return;
		if (control__is_request(&si))
			control__on_signal(&si);
		else if (!signal_delivery__is_sample(signo, &si))
			signal_delivery__deliver(signo, &si, ucontext);
	}
}

/*
 * The handler of the sampling signal. The dispatch comes first: our samples
 * (this thread's CPU-time timer, or readiness of a perf fd, late ones
 * included) are drained here; anything else on this number is the
 * program's own signal (kill, sigqueue, raise, its timers) and gets the
 * program's disposition (signals.c). Async-signal-safe.
 */
void sample__on_signal(int signo, siginfo_t *si, void *ucontext)
{
	int saved_errno = errno, cancel;
	struct ap_thread *t = ap_self;

	if (control__is_request(si)) {
		control__on_signal(si); /* `autoprof ctl`: never the program's */
		return;
	}
	if (!signal_delivery__is_sample(signo, si)) {
		signal_delivery__deliver(signo, si, ucontext);
		return; /* errno is the program's handler's to leave */
	}
	/* libunwind reads and writes its pipe with read()/write(), which are
	 * cancellation points: a cancel pending on this thread must not unwind it
	 * out of the handler. (glibc's setcancelstate is an atomic update of the
	 * thread's own flags, and acts on nothing.) */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);

	/* Ours: this thread's CPU-time timer (the fallback source)... */
	if (cputimer__is_ours(si)) {
		if (t && t->is_timer && buffer__enter(t)) {
			struct drain_ctx a = {.t = t, .ucontext = ucontext, .prog_n = -1};

			ap_call_on_stack(&a, timer_on_stack, t->stack_top);
			buffer__leave(t);
		}
		goto out;
	}
	/* ...or an I/O-readiness signal from the perf fd of the thread it landed on. */
	if (!t || (si->si_fd != t->fd && si->si_fd != t->ramp_fd)) {
		t = registry__from_fd(si->si_fd); /* a thread attached from outside */
		if (!t || t->tid != gettid())
			goto out;
	}
	if (buffer__enter(t)) {
		/* Samples taken from now on are of the handler's own work; the
		 * handler's entry before this is found by its signal frame. */
		uint64_t entered = ap_now();
		struct drain_ctx a = {.t = t,
				      .ucontext = ucontext,
				      .start = t->sampler->measure_cost ? entered : 0,
				      .entered = entered,
				      .cpu0 = (t->win_runs++ & 3) == 0 ? ap_thread_cpu_ns() : 0,
				      .prog_n = -1};

		ap_call_on_stack(&a, drain_on_stack, t->stack_top);
		buffer__leave(t);
		make_way(signo, ucontext);
	}
out:
	/* AUTOPROF_WINDOW: the first sample past the window's end ends it. */
	if (t && t->stats.last_time >= __atomic_load_n(&ap_window_end, __ATOMIC_RELAXED) &&
	    __atomic_load_n(&ap_window_end, __ATOMIC_RELAXED))
		window__end(false);
	pthread_setcancelstate(cancel, NULL);
	errno = saved_errno;
}
