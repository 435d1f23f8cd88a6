/* SPDX-License-Identifier: MIT */
/*
 * signals.h - what the two files that share signals with the program share
 * between them: signals.c (the dispositions, held and virtual) and
 * signal_masks.c (masks and waits). The rest of the library sees them
 * through internal.h, and the handler's side (handler/signal_delivery.c,
 * a held signal that reached our handler) through handler/handler.h.
 */
#ifndef AUTOPROF_WRAP_SIGNALS_H
#define AUTOPROF_WRAP_SIGNALS_H

#include "wrap.h"

/* ---- signals.c ---- */

/* Is the caller outside the session's process (a vfork child)? Async-signal-safe. */
bool signals__foreign(void);
/* Does set hold every real-time signal (a broad set)? */
bool signals__broad(const sigset_t *set);
/* The set to pass on for a set of the program's (see signals.c). Not async-signal-safe. */
const sigset_t *signals__program_set(const sigset_t *set, sigset_t *copy, bool *stripped);

/* ---- signal_masks.c ---- */

/* Find the real mask and wait functions, before any handler runs. Not async-signal-safe. */
void signal_masks__init(void);

#endif
