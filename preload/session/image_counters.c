/* SPDX-License-Identifier: MIT */
/*
 * image_counters.c - this image's counting events (common/counting.c): taken
 * over from the launcher or opened at start, dropped where a hard
 * RLIMIT_NOFILE leaves them no number out of the program's way, and read
 * into the file's stat records (stat_records.c) at the end.
 */
#include <stdlib.h>
#include <sys/resource.h>

#include "internal.h"

/*
 * Counters whose fds took numbers the program can open (a hard
 * RLIMIT_NOFILE with no room above the program's: fdtab__costs) are closed,
 * and one line says so: the program opens as many files as without us.
 */
void image_counters__drop_costly(struct ap_counters *cs)
{
	struct rlimit rl = {0, 0};
	int n = 0;

	for (int i = 0; i < cs->n; i++)
		n += cs->c[i].fd >= 0 && fdtab__costs(cs->c[i].fd);
	if (!n)
		return;
	getrlimit(RLIMIT_NOFILE, &rl);
	pr_warn("RLIMIT_NOFILE %llu/%llu leaves no file descriptor above the program's: not "
		"counting (the counters would take %d of its)",
		(unsigned long long)rl.rlim_cur, (unsigned long long)rl.rlim_max, n);
	counting__close(cs);
}

/*
 * The counters: the launcher's (opened with enable_on_exec, taken over once:
 * the variable is removed so children do not try) or our own, opened now.
 * Returns 0 or -EINVAL (already reported).
 */
int image_counters__start(struct ap_counters *cs, const struct ap_config *cfg)
{
	int err;

	if (cfg->counter_fds[0]) {
		counting__adopt(cs, cfg->counter_fds); /* on failure: said, and no counters */
		unsetenv(ap_env_name(AP_ENV_COUNTER_FDS));
		err = 0;
	} else {
		err = counting__parse(cs, cfg->counters);
		cs->paused = autoprof.paused;
		if (!err)
			counting__open(cs, false);
		cs->start_ns = autoprof.start_time;
	}
	/* they count while sampling is on only (control.c switches them) */
	counting__set_enabled(cs, !autoprof.paused);
	return err;
}

void image_counters__follow(bool paused, uint64_t now, uint64_t since)
{
	struct ap_counters *cs = &autoprof.counters;

	if (!cs->n)
		return;
	counting__set_enabled(cs, !paused);
	if (!paused) { /* the time paused is no time elapsed for the counters */
		if (!cs->start_ns)
			cs->start_ns = autoprof.start_time;
		cs->start_ns += now > since ? now - since : 0;
	}
}

/*
 * Read the counters (closing them at the very end) and store their totals in
 * the file. Returns the time they ran: from the first exec they saw (the
 * launcher's, or an earlier image's), as their values do, less the time
 * sampling was paused (image_counters__follow moves their start on by it).
 * Async-signal-safe.
 */
uint64_t image_counters__save(bool close_them)
{
	struct ap_counters *cs = &autoprof.counters;
	uint64_t now = ap_now();
	uint64_t since = cs->start_ns && cs->start_ns < now ? cs->start_ns : autoprof.start_time;
	/* paused now: they stopped counting when sampling stopped */
	uint64_t end = __atomic_load_n(&autoprof.paused, __ATOMIC_SEQ_CST)
			   ? __atomic_load_n(&autoprof.state_since, __ATOMIC_SEQ_CST)
			   : now;
	uint64_t elapsed = end > since ? end - since : 0;

	counting__read(cs, close_them);
	stat_records__write(&autoprof.writer, cs, AP_SAMPLE_ID + 1, elapsed);
	return elapsed;
}
