/* SPDX-License-Identifier: MIT */
/*
 * drain.h - one drain of a thread's ring, shared by the sampling handler
 * (on_signal.c) and the call chain of each sample (chain.c). Everything
 * declared here is async-signal-safe.
 */
#ifndef AUTOPROF_HANDLER_DRAIN_H
#define AUTOPROF_HANDLER_DRAIN_H

#include "handler.h"

struct drain_ctx {
	struct ap_thread *t;
	void *ucontext;
	uint64_t start;		   /* AUTOPROF_COST: when the handler started, else 0 */
	uint64_t entered;	   /* when the handler was entered (ucontext set), else 0 */
	uint64_t cpu0;		   /* the thread's CPU time then, in 1 run of 4 (pace()), else 0 */
	bool objects;		   /* the drain holds the object table (objects__enter) */
	int prog_n;		   /* frames in prog: -1 until unwound */
	uint64_t live_lo, live_hi; /* the program's stack known readable from a batched copy
				    * made before the handler was entered (chain.c); hi 0: none */
	uint64_t *prog;		   /* the interrupted program's stack, AP_MAX_CHAIN entries: the
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

/* The fields of a kernel SAMPLE in the sample_type perf_event__sampler_attr() asks for. */
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
 * none). Async-signal-safe.
 */
int chain__unwind_user(struct ap_thread *t, void *ucontext, uint64_t *out, unsigned depth);
/* The interrupted program's stack into ctx->prog; returns the frames. Async-signal-safe. */
int chain__program_stack(struct drain_ctx *ctx);
/* The same, walked on the live stack only (no libunwind): 0 where it cannot. Async-signal-safe. */
int chain__program_stack_live(struct drain_ctx *ctx);
/* The call chain of sample s into chain; returns the entries. Async-signal-safe. */
unsigned chain__build(struct drain_ctx *ctx, const struct kernel_sample *s, size_t body,
		      bool kernel_ip, bool last_sample, uint64_t *chain);
/* chain without the profiler's frames; *ip the new first frame. Returns the new nr. */
unsigned chain__own_frames_out(struct drain_ctx *ctx, uint64_t *chain, unsigned nr, bool kernel_ip,
			       uint64_t *ip);

#endif
