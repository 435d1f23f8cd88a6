/* SPDX-License-Identifier: MIT */
/*
 * control.h - the control endpoint a profiled process publishes and
 * `autoprof ctl` reads (preload/session/control.c, launcher/ctl.c).
 *
 * DIR/PID, mode 0600 in a 0700 folder DIR ($XDG_RUNTIME_DIR/autoprof, else
 * /tmp/autoprof-UID), lines of "key value" after the magic line:
 *   pid P, start T (field 22 of /proc/P/stat), signal S, token K, file PATH,
 *   and, when P is profiled from outside (launcher/outside_ctl.c), server L:
 *   the request goes to process L (the launcher), not to P. A launcher that
 *   runs its command under the library publishes pid, start, "launcher 1",
 *   child C and file, no token: a request on its pid goes to each profiled
 *   process among its descendants (launcher/ctl_tree.c).
 * A request is the signal S queued (si_code SI_QUEUE) with the value
 * K << 32 | nonce << 8 | op; the answer is DIR/PID.reply, the magic line
 * then "key value" lines (nonce, sampling, since, samples, lost, file, ...).
 */
#ifndef AUTOPROF_CONTROL_H
#define AUTOPROF_CONTROL_H

#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define AP_CONTROL_MAGIC "autoprof-control 1"

enum { AP_CTL_STATUS = 1, AP_CTL_START, AP_CTL_STOP, AP_CTL_DUMP };

/* The endpoints' folder for uid, given $XDG_RUNTIME_DIR (or NULL). 0 or -ENAMETOOLONG. */
static inline int ap_control_dir(char *out, size_t cap, const char *xdg, uid_t uid)
{
	int n = xdg && xdg[0] == '/' ? snprintf(out, cap, "%s/autoprof", xdg)
				     : snprintf(out, cap, "/tmp/autoprof-%u", (unsigned)uid);

	return n < 0 || (size_t)n >= cap ? -36 /* ENAMETOOLONG */ : 0;
}

/*
 * The endpoints' folder of this user (ap_control_dir), made 0700 when
 * missing; it must be ours, a real folder, and closed to others. Returns 0
 * or -errno. Not async-signal-safe.
 */
static inline int ap_control_dir_make(char *out, size_t cap, const char *xdg)
{
	struct stat st;
	int err = ap_control_dir(out, cap, xdg, getuid());

	if (err)
		return err;
	if (mkdir(out, 0700) < 0 && errno != EEXIST)
		return -errno;
	if (lstat(out, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077))
		return -EPERM;
	return 0;
}

#endif
