/* SPDX-License-Identifier: MIT */
/*
 * samplers.h - what the files of the samplers share among themselves
 * (samplers.c, process_events.c); the rest of the library sees them through
 * internal.h; a thread's events (handler/sampler_events.c) and the registry
 * of every sampled thread (handler/registry.c) are in handler/handler.h and
 * handler/setup.h.
 */
#ifndef AUTOPROF_SESSION_SAMPLERS_H
#define AUTOPROF_SESSION_SAMPLERS_H

#include "internal.h"

#endif
