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

#include "drain.h"

#define MAX_RECORD (128 + (AP_MAX_CHAIN + 2) * 8)

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
 * perf_event__sampler_attr(). Returns the bytes written, 0 for none.
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
		nr = chain__build(ctx, s, body, kernel_ip, last_sample, chain);
		nr = chain__own_frames_out(ctx, chain, nr, kernel_ip, &ip);
		cost_add(t, AP_COST_UNWIND, t0);
		if (!nr) {
			t->stats.own_only++;
			return;
		}
		t0 = cost_now(t);
		if (ctx->objects)
			object_records__note_held(t, chain,
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
void on_signal__from_context(struct ap_thread *t, void *ucontext, uint64_t time, uint32_t cpu,
			     uint64_t period)
{
	uint64_t *chain = (uint64_t *)(t->scratch + AP_RING_COPY_BYTES);
	char *out = buffer__reserve(t, MAX_RECORD);
	unsigned nr = 1;
	int got = 0;

	chain[0] = PERF_CONTEXT_USER;
	if (t->sampler->callgraph != AP_CG_NONE)
		got = chain__unwind_user(t, ucontext, chain + 1, t->sampler->stack_depth);
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

		nr = chain__own_frames_out(&a, chain, nr, false, &ip);
		if (!nr) {
			t->stats.own_only++;
			return;
		}
	}
	object_records__note(t, chain, nr);
	out = buffer__reserve(t, MAX_RECORD);
	t->len += aggregate__fold(t, out,
				  record__sample(out, MAX_RECORD, false, chain[1], t->sampler->pid,
						 (uint32_t)t->tid, time, cpu, period, chain, nr));
	account(t, time, period, nr - 1);
	buffer__maybe_flush(t);
}

/* The drains of a thread's ramp (a tick at every sample) after its copies last grew. */
#define AP_RAMP_DRAINS 16
/* Walks from copies, none run off, whose deepest read decides a smaller copy. */
#define AP_SHRINK_WALKS 2048
/* The smallest copy (AUTOPROF_STACK_COPY's lower bound). */
#define AP_MIN_COPY 512

/*
 * After each AP_SHRINK_WALKS walks of a batched thread's copies (its ramp
 * over), if none ran off the copy's end: copies of what the deepest of
 * those walks needed, a quarter and 128 bytes more (at least AP_MIN_COPY),
 * when that is at most 3/4 of the copy now (a walk from main to _start
 * needs about 920 bytes with glibc 2.36, its start-up frames being large).
 * The kernel copies that much less per sample, and the same ring holds
 * larger batches (sampler_events.c's batch_for: fewer signals). Where a
 * walk then runs off the smaller copy, the copies it had come back at once
 * (adapt_batch) and never shrink again: that thread loses the stacks of at
 * most one drain (samples in the exit path's deeper frames, or of a signal
 * frame, mostly). From the handler only. Async-signal-safe.
 */
static void shrink_copy(struct ap_thread *t)
{
	unsigned reach = t->copy_reach, from = t->copy_bytes, want;

	t->copy_window = t->copy_reach = 0; /* a new window: the program may change */
	if (t->copy_fixed || reach > from)
		return; /* a walk ran off in this window */
	want = (reach + reach / 4 + 128 + 63) & ~63U;
	if (want < AP_MIN_COPY)
		want = AP_MIN_COPY;
	if (want <= from / 4 * 3 && sampler_events__resize_copy(t, want)) {
		t->copy_shrunk_from = from;
		t->copy_samples = t->copy_short = 0;
		t->win_start = 0; /* the backoff: see adapt_batch() */
	}
}

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
	bool deeper = t->copy_short > 0 &&
		      (ramping || (t->copy_short >= 3 && t->copy_short * 128 >= t->copy_samples));

	if (!t->batched)
		return;
	if (t->copy_shrunk_from && (deeper || t->copy_reach > t->copy_bytes)) {
		/* Shrunk too far: the copies it had, and no shrinking again. */
		sampler_events__resize_copy(t, t->copy_shrunk_from);
		t->copy_shrunk_from = 0;
		t->copy_fixed = true;
		t->copy_samples = t->copy_short = t->copy_reach = t->copy_window = 0;
		/* The backoff's window (pace()) starts anew: one that holds the
		 * events' reopening (perf_event_open, mmap, fcntl, ioctl: system
		 * calls the steady state does not make, counted four times when
		 * theirs is the measured run of four) says nothing of what the
		 * samples cost. */
		t->win_start = 0;
		return;
	}
	if (deeper && t->copy_bytes < t->copy_max) {
		sampler_events__grow_copy(t);
		t->copy_samples = t->copy_short = t->copy_reach = t->copy_window = 0;
		t->ramp_drains = 0;
		t->win_start = 0;
		return;
	}
	if (ramping && ++t->ramp_drains >= AP_RAMP_DRAINS && !sampler_events__settle_ramp(t))
		t->ramp_drains = 0; /* its ring could not grow: ramping on, tried again later */
	if (!ramping && t->copy_window >= AP_SHRINK_WALKS)
		shrink_copy(t);
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
void on_signal__drain(struct ap_thread *t, void *ucontext)
{
	struct drain_ctx ctx = {.t = t, .ucontext = ucontext, .prog_n = -1};

	drain(&ctx);
}

/*
 * After the handler's pass over the ring: samples taken since (the flush's
 * write, the handler's own work) are drained at the next signal, when the
 * program has moved on, so keep the stack this handler interrupted, with
 * the time it was entered and the registers it interrupted, for them
 * (handler_program(), splice_program()). A batched thread keeps it at every
 * run, the ring empty or not: a sample the kernel writes after the last look
 * at the ring (the handler's last instructions, its return) needs it as
 * much, and without it lost every frame below the interrupted function (1 in
 * 10,000 samples under load: work_loop and main missing under
 * heavy_two_thirds). The stack kept before is no longer needed: the samples of
 * that run were all in the ring before this handler's, and drained in its
 * pass. Async-signal-safe.
 */
static void keep_program(struct drain_ctx *ctx)
{
	struct ap_thread *t = ctx->t;

	/* the ring empty, for a sample after the last look: a batched thread's walk on the live
	 * stack its copies bound (cheap, at every drain); a signal per sample would walk it with
	 * libunwind once more per sample, and keeps nothing */
	if (ctx->prog_n >= 0 || ring__pending(&t->ring))
		t->kept_n = chain__program_stack(ctx);
	else
		t->kept_n = t->batched ? chain__program_stack_live(ctx) : 0;
	t->kept = ctx->prog == AP_PROG(t, 1);
	t->kept_from = ctx->entered;
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

/*
 * 1 handler run of t in this many has its CPU time measured for the backoff
 * (a system call), counted that many times: about one a 32 samples, at
 * most 1 in 4. With larger batches fewer, longer runs: measuring 1 in 4 of
 * them let one cold run (a first walk through new objects), counted four
 * times, would halve the rate more often than the steady cost says.
 * Async-signal-safe.
 */
static unsigned pace_stride(const struct ap_thread *t)
{
	unsigned per = t->batched && t->tick_batch ? 32 / t->tick_batch : 4;

	return per >= 4 ? 4 : per >= 2 ? 2 : 1;
}

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
		t->win_busy += pace_stride(t) * (cpu - cpu0);
	}
	if (t->win_start && now - t->win_start < PACE_WINDOW_NS)
		return;
	if (!cpu)
		cpu = ap_thread_cpu_ns();
	if (raw_syscall(SYS_getrusage, RUSAGE_THREAD, &ru) < 0)
		return;
	sys = tv_ns(ru.ru_stime);
	user = tv_ns(ru.ru_utime);
	if (t->win_start) {
		uint64_t d = cpu - t->win_cpu, ds = sys - t->win_sys;
		uint64_t dt = ds + (user - t->win_user); /* tick-sampled: for the share only */

		if (d < PACE_MIN_CPU_NS)
			return;
		ds = dt ? (uint64_t)((double)d * (double)ds / (double)dt) : 0;
		/* A thread's first window holds its start-up, whose system time
		 * (loading, page-faulting its data: xz -9 spends 70-93% of its
		 * first 30-60 ms of CPU in the kernel) is not the samples': the
		 * handler's own share only, there. */
		if (!t->win_n++)
			ds = 0;
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

	if (raw_syscall(SYS_rt_sigpending, &pending, _NSIG / 8) < 0)
		return;
	for (int s = 1; s < _NSIG; s++)
		if (s == signo || sigismember(&((ucontext_t *)ucontext)->uc_sigmask, s))
			sigdelset(&pending, s);
	if (sigisemptyset(&pending))
		return;
	sigemptyset(&one);
	sigaddset(&one, signo);
	for (int i = 0; i < 65536; i++) {
		if (raw_syscall(SYS_rt_sigtimedwait, &one, &si, &zero, _NSIG / 8) != signo)
			return;
		if (control_request__is_request(&si))
			control_request__on_signal(&si);
		else if (!signal_delivery__is_sample(signo, &si))
			signal_delivery__deliver(signo, &si, ucontext);
	}
}

/*
 * The cancel state the handler found, back: enabling it through a deferred
 * type, then the thread's own type again, so that a cancel that came while
 * it was disabled acts as glibc acts on it (glibc 2.36's setcancelstate acts
 * on an asynchronous one without the thread's result: pthread_join then
 * gave NULL, not PTHREAD_CANCELED, in 50 of 50 tries; setcanceltype sets
 * it). Async-signal-safe (atomic updates of the thread's own flags).
 */
static void restore_cancel(int state)
{
	int type;

	if (state != PTHREAD_CANCEL_ENABLE)
		return;
	pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, &type);
	pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
	pthread_setcanceltype(type, NULL);
}

/*
 * The handler of the sampling signal. The dispatch comes first: our samples
 * (this thread's CPU-time timer, or readiness of a perf fd, late ones
 * included) are drained here; anything else on this number is the
 * program's own signal (kill, sigqueue, raise, its timers) and gets the
 * program's disposition (signals.c). Async-signal-safe.
 */
void on_signal__handle(int signo, siginfo_t *si, void *ucontext)
{
	int saved_errno = errno, cancel;
	struct ap_thread *t = ap_self;

	if (control_request__is_request(si)) {
		control_request__on_signal(si); /* `autoprof ctl`: never the program's */
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

			own_stack__call(&a, timer_on_stack, t->stack_top);
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
		struct drain_ctx a = {
		    .t = t,
		    .ucontext = ucontext,
		    .start = t->sampler->measure_cost ? entered : 0,
		    .entered = entered,
		    .cpu0 = t->win_runs++ % pace_stride(t) == 0 ? ap_thread_cpu_ns() : 0,
		    .prog_n = -1};

		own_stack__call(&a, drain_on_stack, t->stack_top);
		/* the kept stack's span: the samples on the handler's own stack, the last
		 * look at the ring and keep_program() included (after this, a sample's
		 * walk crosses the signal frame, matched by its registers) */
		t->kept_to = ap_now();
		buffer__leave(t);
		make_way(signo, ucontext);
	}
out:
	/* AUTOPROF_WINDOW: the first sample past the window's end ends it; not while the thread
	 * is held (the signal interrupted a memory sample of this thread, or a visitor has it):
	 * its records would miss their window's file, the next signal ends it. */
	if (t && t->stats.last_time >= __atomic_load_n(&ap_window_end, __ATOMIC_RELAXED) &&
	    __atomic_load_n(&ap_window_end, __ATOMIC_RELAXED) &&
	    !__atomic_load_n(&t->in_handler, __ATOMIC_SEQ_CST))
		windows__end(false);
	restore_cancel(cancel);
	errno = saved_errno;
}
