/* SPDX-License-Identifier: MIT */
/*
 * cost.c - AUTOPROF_COST=1: the sampling handler times its own phases
 * (on_signal.c, CLOCK_MONOTONIC through the vDSO, about 20 ns a reading) and
 * the library says per sample where the time went, on stderr at the end.
 * For scripts/bench/cost.py (make bench-cost); off by default, where it
 * costs one predictable branch per phase.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Whether AUTOPROF_COST asks for the phases to be timed (the settled configuration). */
bool cost__wanted(void)
{
	return autoprof.cfg->cost;
}

/* One line on stderr: ns per sample of each phase, when they were timed. */
void cost__say(const struct ap_stats *s)
{
	double n = (double)s->cost[AP_COST_SAMPLES];
	double h = (double)s->cost[AP_COST_HANDLERS];
	double unwind = (double)s->cost[AP_COST_UNWIND], note = (double)s->cost[AP_COST_NOTE];
	double rec = (double)s->cost[AP_COST_RECORD], flush = (double)s->cost[AP_COST_FLUSH];
	double all = (double)s->cost[AP_COST_HANDLER];

	if (!cost__wanted() || n == 0 || h == 0)
		return;
	pr_warn(
	    "cost: %.0f samples in %.0f handler runs; per sample: handler %.0f ns = unwind "
	    "%.0f + object records %.0f + record %.0f + flush %.0f + drain and entry %.0f; "
	    "from the newest sample to its handler (batched: to the tick's) %.0f ns; %.1f frames; "
	    "%.1f samples per signal; %.0f bytes of stack copied per sample, %.0f a thread's "
	    "copy at its end",
	    n, h, all / n, unwind / n, note / n, rec / n, flush / n,
	    (all - unwind - note - rec - flush) / n, (double)s->cost[AP_COST_DELAY] / h,
	    (double)s->frames / (double)(s->samples ? s->samples : 1), n / h,
	    (double)s->copied / (double)(s->samples ? s->samples : 1),
	    (double)s->copy_end / (double)(s->threads ? s->threads : 1));
}
