/* SPDX-License-Identifier: MIT */
/*
 * perf_event.c - the per-thread sampling event: attr, open, signal routing.
 *
 * One event per thread (inherit=0): an inherited event cannot be mmapped and
 * would send every overflow signal to the thread that opened it. The signal
 * goes to the owning thread through F_SETOWN_EX/F_OWNER_TID; plain F_SETOWN
 * with a tid is not thread-directed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "handler.h"
#include "settled.h"
#include "setup.h"

/* The highest sample_freq the kernel accepts, or 0 when unknown. */
int perf_event__max_sample_rate(void)
{
	char buf[32];

	if (raw_syscall__read_file("/proc/sys/kernel/perf_event_max_sample_rate", buf,
				   sizeof(buf)) <= 0)
		return 0;
	return atoi(buf);
}

/*
 * Fill attr with the kernel event each thread opens for cfg. The file's attr
 * is derived from it by the writer. Returns 0.
 */
int perf_event__sampler_attr(const struct ap_settled *cfg, struct perf_event_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	if (cfg->period) {
		attr->sample_period = cfg->period;
	} else {
		attr->freq = 1;
		attr->sample_freq = cfg->freq;
	}
	attr->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			    PERF_SAMPLE_PERIOD;
	/* The kernel's chains: whole in fp mode, the kernel part with AUTOPROF_KERNEL. */
	if (cfg->callgraph == AP_CG_FP || cfg->kernel) {
		attr->sample_type |= PERF_SAMPLE_CALLCHAIN;
		attr->exclude_callchain_kernel = !cfg->kernel;
		attr->exclude_callchain_user = cfg->callgraph != AP_CG_FP;
		attr->sample_max_stack = (uint16_t)cfg->stack_depth;
	}
	/* Batched libunwind stacks: each sample carries the registers the
	 * unwinder starts from and a copy of the stack above sp (cfi.c). */
	if (perf_event__batched(cfg)) {
		attr->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		attr->sample_regs_user = AP_BATCH_REGS;
		attr->sample_stack_user = cfg->stack_copy;
	}
	attr->disabled = 1;
	attr->exclude_kernel = !cfg->kernel;
	attr->exclude_hv = 1;
	events__apply(&cfg->event, attr); /* type, configs, :u/:k/:p */
	attr->use_clockid = 1;
	attr->clockid = CLOCK_MONOTONIC;
	attr->wakeup_events = 1;
	/* Batched: no wake-up per sample either. A wake-up is an irq_work (a
	 * self-IPI: on a VM an exit, about 20 us here) whether anyone waits or
	 * not; the tick drains the ring, so wake only when it is full. */
	if (perf_event__batched(cfg)) {
		attr->wakeup_events = 0;
		attr->watermark = 1;
		attr->wakeup_watermark = UINT32_MAX; /* the kernel clamps it to the ring */
	}
	/* The thread's executable mmaps (not data: mmap_data = 0) as MMAP2
	 * records in its ring, with TID/TIME/CPU trailers: the handler copies
	 * the anonymous ones (JIT code) into the file. */
	attr->mmap = 1;
	attr->mmap2 = 1;
	attr->sample_id_all = 1;
	return 0;
}

/*
 * Whether cfg's samples are batched: libunwind stacks, AUTOPROF_BATCH > 1,
 * an architecture cfi.c knows, and a rate the tick event can follow in time
 * (a frequency, or a period of cpu-clock or task-clock nanoseconds).
 */
bool perf_event__batched(const struct ap_settled *cfg)
{
#if defined(__x86_64__)
	if (cfg->callgraph != AP_CG_LIBUNWIND || cfg->batch <= 1)
		return false;
	return !cfg->period || (cfg->event.type == PERF_TYPE_SOFTWARE &&
				(cfg->event.config == PERF_COUNT_SW_CPU_CLOCK ||
				 cfg->event.config == PERF_COUNT_SW_TASK_CLOCK));
#else
	(void)cfg;
	return false;
#endif
}

/*
 * How many samples a batched thread's tick spans once ramped up: cfg->batch,
 * or more at high rates (sampler_events.c's batch_for, per thread).
 * With AUTOPROF_KERNEL the samples taken in the kernel fill the ring while
 * the user-only tick cannot fire: it ticks at about the sampling rate then
 * (perf_event__tick_attr: 13/8 of the period), so a
 * thread is drained at each of its returns to user space.
 */
unsigned perf_event__tick_samples(const struct ap_settled *cfg)
{
	return cfg->kernel ? 1 : cfg->batch;
}

/* The samples a batched thread's tick spans at most (the ring holds 16 such batches). */
unsigned perf_event__tick_span(const struct ap_settled *cfg)
{
	uint64_t period_ns = cfg->interval_ns;
	uint64_t n = period_ns ? (AP_TICK_MIN_NS + period_ns - 1) / period_ns : 1;

	return n > cfg->batch ? (unsigned)n : cfg->batch;
}

/*
 * The tick of a batched sampler: a cpu-clock event of the same thread that
 * fires once per `samples` samples of the sampling event and only raises
 * the signal (its ring has no data pages), on which the handler drains the
 * sampling event's ring. (The kernel signals an O_ASYNC event at every
 * overflow, whatever wakeup_events says: batching needs a second event.)
 * An excluded tick (user-only, expiring in the kernel) raises nothing.
 */
void perf_event__tick_attr(const struct ap_settled *cfg, struct perf_event_attr *attr,
			   unsigned samples)
{
	uint64_t period_ns = cfg->interval_ns;

	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = PERF_TYPE_SOFTWARE;
	attr->config = PERF_COUNT_SW_CPU_CLOCK;
	/* A tick at every sample runs at 13/8 of the period (about the golden
	 * ratio): two cpu-clock timers of one period on one thread keep their
	 * phase, and where the tick came to fire just before the sampler (their
	 * order drifts as the thread is switched out and in) the sampler fell in
	 * the tick's irq_work return to user space (asm_sysvec_irq_work): with
	 * AUTOPROF_KERNEL 20-25% of a run's samples, in 1 run of 6. At 3/2 the
	 * phases alternate between two, still up to 4%; at 13/8 they spread. */
	attr->sample_period = samples == 1 ? period_ns * 13 / 8 : period_ns * samples;
	/* Never more than one tick per AP_TICK_MIN_NS of the thread's CPU time:
	 * each overflow signal costs the kernel an irq_work (a self-IPI, about
	 * 20 us on a VM) whether or not one is pending already; at 100 kHz a
	 * tick at every sample took more than the CPU (soft lockups). */
	if (attr->sample_period < AP_TICK_MIN_NS)
		attr->sample_period = AP_TICK_MIN_NS;
	attr->disabled = 1;
	/* User time only, even with AUTOPROF_KERNEL (whose kernel samples ride
	 * in the ring, signalling no one): a tick that expired in a system call
	 * would leave its signal pending there, and a wait the program is
	 * entering (epoll_wait, poll, nanosleep: never restarted) would end
	 * with EINTR. A thread that lives in system calls is drained at its
	 * next user tick, or when its ring is full. */
	attr->exclude_kernel = 1;
	attr->exclude_hv = 1;
	attr->wakeup_events = 1;
}

static int perf_event_open(struct perf_event_attr *attr, pid_t tid, int group, unsigned long fl)
{
	return (int)raw_syscall(SYS_perf_event_open, attr, tid, -1, group, fl);
}

/*
 * Open attr for thread tid (0 = the caller), close-on-exec. The fd is only
 * held while the thread's sampler is set up (samplers.c closes it), so it is
 * not moved out of the program's range. Returns the fd or -errno. Raw system
 * calls only.
 */
int perf_event__open(struct perf_event_attr *attr, pid_t tid)
{
	int fd = perf_event_open(attr, tid, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/*
 * Send fd's overflow notifications to thread tid as signal signo. Returns 0
 * or -errno. Raw system calls only (fcntl() would be our own wrapper,
 * wrap/fds.c, which ends in the same system calls for our fds).
 */
int perf_event__route_signal(int fd, int signo, pid_t tid)
{
	struct f_owner_ex owner = {.type = F_OWNER_TID, .pid = tid};
	long fl;

	if (raw_syscall(SYS_fcntl, fd, F_SETOWN_EX, &owner) < 0 ||
	    raw_syscall(SYS_fcntl, fd, F_SETSIG, (long)signo) < 0)
		return -errno;
	fl = raw_syscall(SYS_fcntl, fd, F_GETFL);
	if (fl < 0 || raw_syscall(SYS_fcntl, fd, F_SETFL, fl | (long)O_ASYNC) < 0)
		return -errno;
	return 0;
}

/* Can the calling thread open attr? The event is closed again. Returns 0 or -errno. */
int perf_event__probe(const struct perf_event_attr *attr)
{
	struct perf_event_attr copy = *attr;
	int fd = perf_event_open(&copy, 0, -1, PERF_FLAG_FD_CLOEXEC);

	if (fd < 0)
		return -errno;
	fdtab__close(fd);
	return 0;
}
