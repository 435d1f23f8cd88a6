/* SPDX-License-Identifier: MIT */
/*
 * onefile_wstat.h - what the merge of a run's windows (onefile_windows.c)
 * does around the windows: their names' stamps, a killed launcher's
 * leftovers, the counter totals' file. Not async-signal-safe.
 */
#ifndef AUTOPROF_ONEFILE_WSTAT_H
#define AUTOPROF_ONEFILE_WSTAT_H

#include <stdbool.h>
#include <time.h>

/* Does @s start with a window's stamp, ".yyyymmddThhmmss.mmm" (20 characters)? */
bool onefile_wstat__is_stamp(const char *s);
/* Remove @dir/@base.<stamp>.merging-PID files a killed launcher left (PID gone). */
void onefile_wstat__remove_stale(const char *dir, const char *base);
/*
 * The run's counter totals (written since @since): the latest window .stat
 * the first process wrote (@base[.PID[.N]].<stamp>.stat; at a tie, the
 * exec'd image's) becomes @base.<stamp>.stat, the others are removed.
 */
void onefile_wstat__take(const char *dir, const char *base, const struct timespec *since,
			 bool quiet);

#endif
