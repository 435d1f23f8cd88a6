/* SPDX-License-Identifier: MIT */
/*
 * setup.h - what the session calls in handler/ outside any handler: setting
 * up and tearing down the state the handlers read. None of it is
 * async-signal-safe unless its comment says so; handler.h declares what
 * runs in the handlers.
 */
#ifndef AUTOPROF_HANDLER_SETUP_H
#define AUTOPROF_HANDLER_SETUP_H

#include "handler.h"

/* ---- registry.c: every sampled thread ---- */

/* Put t in the registry. Returns 0 or -errno. */
int registry__add(struct ap_thread *t);
/* Take t out again (its start failed). */
void registry__drop(struct ap_thread *t);
/* The lock held to claim a thread or go over the table in order. */
void registry__lock(void);
void registry__unlock(void);
/* Try the lock only (the emergency stop: the interrupted code may hold it): glibc's
 * pthread_mutex_trylock on a normal mutex is one compare-and-swap, it never waits. */
bool registry__trylock(void);
/* pthread_atfork: no thread holds the registry across fork. */
void registry__atfork_prepare(void);
void registry__atfork_parent(void);
/* In a forked child: the parent's threads, forgotten unwritten. */
void registry__forget_all(void);

#endif /* AUTOPROF_HANDLER_SETUP_H */
