/* SPDX-License-Identifier: MIT */
/*
 * summary.c - the last words of an image, on stderr: what the signals made
 * the sampler do (said when it matters), and what it wrote (when verbose).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "internal.h"

/* What the signals made the sampler do, said once at the end. */
void summary__say_signals(void)
{
	unsigned long n;
	int signo;

	if (autoprof.stats.slowdowns)
		pr_warn("sampling took more than a quarter of some threads' CPU time: their rate "
			"was halved %llu times in all (the rate delivered is in the samples' "
			"periods)",
			(unsigned long long)autoprof.stats.slowdowns);
	if (autoprof.stats.agg_full)
		pr_warn("--aggregate: a table of merged records filled %llu times before its "
			"window's end and was written out early each time (the file is larger: "
			"more distinct stacks than it holds); no sample was dropped",
			(unsigned long long)autoprof.stats.agg_full);
	n = signal_delivery__stepped_aside(&signo);
	if (n)
		pr_warn("the program reads signal %d itself on %lu thread%s that block%s it "
			"(signalfd, sigwait): %s stopped being sampled then",
			signo, n, n == 1 ? "" : "s", n == 1 ? "s" : "", n == 1 ? "it" : "they");
	n = signal_delivery__stray_sigios();
	if (n)
		pr_info("%lu SIGIO%s of the kernel for our descriptors (the real-time queue was "
			"full) dropped",
			n, n == 1 ? "" : "s");
}

/* The last words of an image: what it wrote, when verbose. */
void summary__say(void)
{
	const struct ap_settled *cfg = autoprof.cfg;
	char rate[48] = "";

	/* The rate delivered, where the samples' periods are CPU time in ns. */
	if (cfg->event.type == PERF_TYPE_SOFTWARE &&
	    (cfg->event.config == PERF_COUNT_SW_CPU_CLOCK ||
	     cfg->event.config == PERF_COUNT_SW_TASK_CLOCK) &&
	    autoprof.stats.period_sum)
		snprintf(rate, sizeof(rate), " at %.0f Hz",
			 (double)autoprof.stats.samples * 1e9 / (double)autoprof.stats.period_sum);
	pr_info("wrote %llu samples of %llu threads (%llu lost, %llu without a full stack)%s to %s",
		(unsigned long long)autoprof.stats.samples,
		(unsigned long long)autoprof.stats.threads, (unsigned long long)autoprof.stats.lost,
		(unsigned long long)(autoprof.stats.unwind_skipped + autoprof.stats.unwind_short),
		rate, autoprof.writer.path);
	pr_info("not unwound: %llu samples in the loader, an unwinder or autoprof, %llu during "
		"a dlclose; left out: %llu samples of the profiler's code alone",
		(unsigned long long)unwind__skipped_in_text(),
		(unsigned long long)objects__skipped_busy(),
		(unsigned long long)autoprof.stats.own_only);
	if (autoprof.sampler.offcpu_id)
		pr_info("off-CPU: %llu waits placed (%.3f s), %.3f s in waits under 10 us, %.3f s "
			"in waits outside the calls we wrap",
			(unsigned long long)autoprof.stats.offcpu_waits,
			(double)autoprof.stats.offcpu_ns / 1e9,
			(double)autoprof.stats.offcpu_short / 1e9,
			(double)autoprof.stats.offcpu_elsewhere / 1e9);
	cost__say(&autoprof.stats);
	if (autoprof.stats.unwinds)
		pr_info("unwinding: %.2f us and %.1f frames per sample (%llu samples, %llu by "
			"DWARF steps where the fast trace stopped short)",
			(double)autoprof.stats.unwind_ns / 1e3 / (double)autoprof.stats.unwinds,
			(double)autoprof.stats.frames / (double)autoprof.stats.samples,
			(unsigned long long)autoprof.stats.unwinds,
			(unsigned long long)autoprof.stats.unwind_slow);
}
