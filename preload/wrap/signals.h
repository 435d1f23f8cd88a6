/* SPDX-License-Identifier: MIT */
/*
 * signals.h - what the three files that share signals with the program
 * share among themselves: signals.c (the dispositions, held and virtual),
 * signal_delivery.c (a held signal that reached our handler) and
 * signal_masks.c (masks and waits). The rest of the library sees them
 * through internal.h and handler/handler.h.
 */
#ifndef AUTOPROF_WRAP_SIGNALS_H
#define AUTOPROF_WRAP_SIGNALS_H

#include "wrap.h"

/* ---- signals.c ---- */

/* Is the caller outside the session's process (a vfork child)? Async-signal-safe. */
bool signals__foreign(void);
/* A consistent copy of sig's holder (returned) and virtual disposition. Async-signal-safe. */
int signals__read_virt(int sig, struct sigaction *out);
/* Has sig carried samples at some time? Async-signal-safe. */
bool signals__ever_sampled(int sig);
/* SA_RESETHAND: the handler ran once; sig's virtual disposition becomes SIG_DFL. Async-signal-safe.
 */
void signals__reset_handler(int sig, sighandler_t ran);
/* Does set hold every real-time signal (a broad set)? */
bool signals__broad(const sigset_t *set);
/* The set to pass on for a set of the program's (see signals.c). Not async-signal-safe. */
const sigset_t *signals__program_set(const sigset_t *set, sigset_t *copy, bool *stripped);

/* ---- signal_masks.c ---- */

/* Find the real mask and wait functions, before any handler runs. Not async-signal-safe. */
void signal_masks__init(void);

#endif
