/* SPDX-License-Identifier: MIT */
/*
 * sampler_arming.c - a sampled thread's events following the session's
 * pause (`autoprof ctl`, AUTOPROF_START: ended, or opened again) and ending
 * for good when the program takes the sampling signal on it. The events are
 * sampler_events.c's.
 */
#include <errno.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include "handler.h"
#include "setup.h"

/*
 * Make t's sample source follow paused (the session's: `autoprof ctl`,
 * AUTOPROF_START): paused, its perf event is ended (its ring unmapped: the
 * event has no fd left) or its timer disarmed; running, it gets a new event
 * (or its timer armed). The caller holds t (registry__grab). Returns 0 or
 * -errno. Async-signal-safe (system calls only).
 */
int sampler_arming__sync(struct ap_thread *t, bool paused)
{
	int err, sample_fd = -1, tick_fd = -1;

	if (t->is_timer)
		return cputimer__set_armed(t, !paused);
	if (paused) {
		ring__unmap(&t->ring); /* drops at most the samples not yet drained */
		ring__unmap(&t->tick); /* batched: the tick that signals */
		sampler_events__end_ramp(t);
		return 0;
	}
	if (t->ring.page)
		return 0;
	/* Batched as threads that start running are, else a signal per sample. */
	if (t->sampler->batched &&
	    sampler_events__open_batched(t, t->tid, &sample_fd, &tick_fd) == 0) {
		err = raw_syscall(SYS_ioctl, sample_fd, PERF_EVENT_IOC_ENABLE, 0) < 0 ||
			      raw_syscall(SYS_ioctl, tick_fd, PERF_EVENT_IOC_ENABLE, 0) < 0
			  ? -errno
			  : 0;
		if (err) {
			ring__unmap(&t->ring);
			ring__unmap(&t->tick);
			sampler_events__end_ramp(t);
		} else {
			t->batched = true;
			t->fd = tick_fd;
		}
		raw_syscall(SYS_close, sample_fd);
		raw_syscall(SYS_close, tick_fd);
		return err;
	}
	t->batched = false;
	err = sampler_events__open_plain(t, t->tid);
	if (err)
		return err;
	if (raw_syscall(SYS_ioctl, t->fd, PERF_EVENT_IOC_ENABLE, 0) < 0) {
		err = -errno;
		ring__unmap(&t->ring);
	}
	raw_syscall(SYS_close, t->fd);
	return err;
}

/*
 * The calling thread stops being sampled for good, from a handler (the
 * program reads the sampling signal itself on it: signals.c): its samples
 * so far are kept, its events end. Returns whether it was sampled until
 * then. Async-signal-safe.
 */
bool sampler_arming__step_aside(void)
{
	struct ap_thread *t = ap_self;
	bool had;

	if (!t || !registry__grab(t, true))
		return false;
	had = t->ring.page || t->tick.page || t->is_timer;
	if (t->is_timer)
		cputimer__set_armed(t, false);
	if (t->ring.page)
		on_signal__drain(t, NULL);
	ring__unmap(&t->tick);
	sampler_events__end_ramp(t);
	ring__unmap(&t->ring);
	registry__release(t);
	return had;
}
