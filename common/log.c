/* SPDX-License-Identifier: MIT */
/*
 * log.c - the library's only output: one line per message on stderr.
 *
 * Lines are formatted into a stack buffer and written with one write(2), so
 * they are not interleaved with the program's own stdio buffers and never
 * touch the program's FILE *stderr state.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <sys/syscall.h>

#include "common.h"
#include "stderr_fits.h"

int ap_verbose;
bool ap_quiet;

static char *capture;
static size_t capture_len;

/*
 * Keep the first warning in buf (without the "autoprof: " prefix) instead of
 * printing it, even when quiet; a NULL buf prints again. For the launcher,
 * which says in its own words why a flag is refused. Not async-signal-safe.
 */
void log__capture(char *buf, size_t len)
{
	capture = buf;
	capture_len = len;
	if (buf && len)
		buf[0] = 0;
}

bool log__stderr_fits(size_t len)
{
	return stderr_fits(raw_syscall, len);
}

static void vlog(const char *fmt, va_list ap_list)
{
	char line[1024];
	int saved = errno;
	int n = snprintf(line, sizeof(line), "autoprof: ");

	n += vsnprintf(line + n, sizeof(line) - n, fmt, ap_list);
	if (n >= (int)sizeof(line) - 1)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	if (!log__stderr_fits((size_t)n)) {
		errno = saved;
		return;
	}
	for (ssize_t w, off = 0; off < n; off += w) {
		w = write(STDERR_FILENO, line + off, n - off);
		if (w <= 0)
			break;
	}
	errno = saved;
}

void log__warn(const char *fmt, ...)
{
	va_list ap_list;

	if (capture) {
		if (!capture[0]) {
			va_start(ap_list, fmt);
			vsnprintf(capture, capture_len, fmt, ap_list);
			va_end(ap_list);
		}
		return;
	}
	if (ap_quiet)
		return;
	va_start(ap_list, fmt);
	vlog(fmt, ap_list);
	va_end(ap_list);
}

void log__note(int level, const char *fmt, ...)
{
	va_list ap_list;

	if (ap_quiet || ap_verbose < level)
		return;
	va_start(ap_list, fmt);
	vlog(fmt, ap_list);
	va_end(ap_list);
}

/*
 * Write msg (len bytes: a whole line, "autoprof: " included) on stderr the
 * first time only, *said marking it. Raw system call: async-signal-safe.
 */
void log__say_once(int *said, const char *msg, size_t len)
{
	if (!__atomic_exchange_n(said, 1, __ATOMIC_RELAXED) && log__stderr_fits(len))
		raw_syscall(SYS_write, 2, msg, len);
}
