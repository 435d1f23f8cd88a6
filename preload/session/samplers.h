/* SPDX-License-Identifier: MIT */
/*
 * samplers.h - what the files of the samplers share among themselves
 * (samplers.c, sampler_events.c, process_events.c); the rest of the library
 * sees them through internal.h, the registry of every sampled thread through
 * handler/handler.h and handler/setup.h.
 */
#ifndef AUTOPROF_SESSION_SAMPLERS_H
#define AUTOPROF_SESSION_SAMPLERS_H

#include "internal.h"

/* ---- sampler_events.c ---- */

/* Each returns 0 or -errno with nothing left open (contracts at the definitions). */
int sampler_events__open_tick(struct ap_thread *t, pid_t tid, int signo, int *tick_fd);
int sampler_events__open_batched(struct ap_thread *t, pid_t tid, int *fd, int *tick_fd);
int sampler_events__open_plain(struct ap_thread *t, pid_t tid); /* async-signal-safe */
/* Give t a new event that signals with signo. Caller holds the registry lock. */
void sampler_events__reopen(struct ap_thread *t, int signo);

#endif
