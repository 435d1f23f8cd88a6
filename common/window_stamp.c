/* SPDX-License-Identifier: MIT */
/*
 * window_stamp.c - the UTC stamp that names a window's file (AUTOPROF_WINDOW):
 * FILE.yyyymmddThhmmss.mmm, so that the files of a run sort by time. Shared
 * by the library's windows (preload/handler/windows.c) and the launcher's
 * outside mode (launcher/outside_windows.c): both name their files alike.
 */
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

/*
 * The UTC stamp of CLOCK_MONOTONIC time @mono ("yyyymmddThhmmss.mmm") into
 * @out (AP_STAMP_LEN bytes). Async-signal-safe.
 */
void window_stamp__utc(uint64_t mono, char *out)
{
	struct timespec rt, mt;
	uint64_t ms;
	int64_t days, secs, z, era, doe, yoe, y, doy, mp, d, m;

	raw_syscall(SYS_clock_gettime, CLOCK_REALTIME, &rt);
	raw_syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &mt);
	ms = ((uint64_t)rt.tv_sec * 1000000000ULL + (uint64_t)rt.tv_nsec -
	      ((uint64_t)mt.tv_sec * 1000000000ULL + (uint64_t)mt.tv_nsec - mono)) /
	     1000000ULL;
	days = (int64_t)(ms / 86400000ULL);
	secs = (int64_t)(ms / 1000 % 86400);
	/* Civil date from days since 1970-01-01 (H. Hinnant's algorithm). */
	z = days + 719468;
	era = z / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	y = yoe + era * 400;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	d = doy - (153 * mp + 2) / 5 + 1;
	m = mp < 10 ? mp + 3 : mp - 9;
	y += m <= 2;
	{
		int64_t v[] = {
		    y, m, d, secs / 3600, secs / 60 % 60, secs % 60, (int64_t)(ms % 1000)};
		static const int width[] = {4, 2, 2, 2, 2, 2, 3};
		static const char after[] = {0, 0, 'T', 0, 0, '.', 0};
		int n = 0;

		for (int i = 0; i < 7; i++) {
			for (int k = width[i] - 1; k >= 0; k--, v[i] /= 10)
				out[n + k] = (char)('0' + v[i] % 10);
			n += width[i];
			if (after[i])
				out[n++] = after[i];
		}
		out[n] = 0;
	}
}
