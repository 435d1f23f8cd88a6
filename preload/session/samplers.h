/* SPDX-License-Identifier: MIT */
/*
 * samplers.h - what the files of the samplers share among themselves
 * (samplers.c, sampler_events.c, registry.c, process_events.c); the rest of
 * the library sees them through internal.h and handler/handler.h.
 */
#ifndef AUTOPROF_SESSION_SAMPLERS_H
#define AUTOPROF_SESSION_SAMPLERS_H

#include "internal.h"

/* ---- registry.c ---- */

/* Put t in the registry. Returns 0 or -errno. Not async-signal-safe. */
int registry__add(struct ap_thread *t);
/* Take t out again (its start failed). Not async-signal-safe. */
void registry__drop(struct ap_thread *t);
/* The lock held to claim a thread or go over the table in order. Not async-signal-safe. */
void registry__lock(void);
void registry__unlock(void);
/* Try the lock only. Async-signal-safe. */
bool registry__trylock(void);
/* The highest slot used (-1: none), and the thread in slot i. Async-signal-safe. */
int registry__top(void);
struct ap_thread *registry__at(int i);
/* Take t out to stop it; false if someone else did. Caller holds the lock (or tried it). */
bool registry__claim(struct ap_thread *t);
/* Wait (bounded) until t's handler is not running; true when it left. Async-signal-safe. */
bool registry__wait_handler(struct ap_thread *t);
/* Wait (bounded) until no visitor goes over the registry. Async-signal-safe. */
void registry__wait_visitors(void);

/* ---- sampler_events.c ---- */

/* Each returns 0 or -errno with nothing left open (contracts at the definitions). */
int sampler_events__open_tick(struct ap_thread *t, pid_t tid, int signo, int *tick_fd);
int sampler_events__open_batched(struct ap_thread *t, pid_t tid, int *fd, int *tick_fd);
int sampler_events__open_plain(struct ap_thread *t, pid_t tid); /* async-signal-safe */
/* Give t a new event that signals with signo. Caller holds the registry lock. */
void sampler_events__reopen(struct ap_thread *t, int signo);

#endif
