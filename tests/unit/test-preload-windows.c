/* SPDX-License-Identifier: MIT */
/*
 * Unit test: a window's end (preload/handler/windows.c) through its seams
 * alone, with no session: the windows set up from a settled configuration
 * (windows__first_path), the image the session registers (image__register:
 * its writer, pid, whether it profiles, the snapshot it lets the handler
 * call). Before the window's end nothing happens; after it, the registered
 * snapshot is called with the image's writer, the file goes on in a new one
 * named by the window's stamp, and the oldest beyond AUTOPROF_KEEP goes; for
 * another process, or a session that stopped, nothing happens. Under the
 * launcher (an epoch) the windows count from the epoch, not from the start.
 */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "handler/handler.h"
#include "handler/settled.h"
#include "handler/setup.h"
#include "tap.h"

#define WINDOW_NS 400000000ULL /* 400 ms: no stall on a loaded machine spans one */

static char dir[] = "/tmp/autoprof-unit-windows.XXXXXX";
static struct writer w;
static int snapshots;
static struct writer *snapshot_of;

/* The session's snapshot (AUTOPROF_MEMORY's live set), as registered: counted. */
static void snapshot(struct writer *wr)
{
	snapshots++;
	snapshot_of = wr;
}

/* The files in dir whose names start with "w.data." (the windows' files). */
static int windows_files(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		n += !strncmp(e->d_name, "w.data.", 7);
	if (d)
		closedir(d);
	return n;
}

/* Sleep until CLOCK_MONOTONIC passes t (ns). */
static void sleep_past(uint64_t t)
{
	while (ap_now() <= t) {
		struct timespec ts = {0, 5000000};

		nanosleep(&ts, NULL);
	}
}

int main(void)
{
	static struct ap_settled cfg = {.window_ns = WINDOW_NS, .keep = 2};
	static bool active = true;
	static pid_t pid;
	struct writer_event ev = {.attr = {.type = PERF_TYPE_SOFTWARE,
					   .config = PERF_COUNT_SW_CPU_CLOCK,
					   .sample_freq = 1000,
					   .freq = 1},
				  .id = AP_SAMPLE_ID,
				  .name = "cpu-clock"};
	char base[PATH_MAX - 64], path[PATH_MAX], first[PATH_MAX];
	uint64_t end;

	plan(15);
	ap_quiet = true;
	pid = getpid();
	if (!mkdtemp(dir))
		return 1;
	snprintf(base, sizeof(base), "%s/w.data", dir);

	/* Set up from the settled configuration: the first window's name. */
	strcpy(path, base);
	ok(windows__first_path(&cfg, path, sizeof(path)) == 0 &&
	       !strncmp(path, base, strlen(base)) && path[strlen(base)] == '.' &&
	       strlen(path) == strlen(base) + AP_STAMP_LEN,
	   "the first window's file is FILE.<stamp> (%s)", path + strlen(dir) + 1);
	end = __atomic_load_n(&ap_window_end, __ATOMIC_ACQUIRE);
	ok(end > ap_now() && end <= ap_now() + WINDOW_NS,
	   "the first window ends one window from now");
	strcpy(first, path);
	ok(writer__open(&w, path, &ev, 1, false) == 0, "the first window's file opens");
	{
		char rec[256];
		size_t n = record__comm(rec, sizeof(rec), 1, 1, "first", 0, false);

		ok(n && writer__append(&w, rec, n) == 0 && windows_files() == 1,
		   "its first records make it");
	}

	/* Past the window's end, but nothing registered: nothing happens. */
	sleep_past(end);
	windows__end(true);
	ok(__atomic_load_n(&ap_window_end, __ATOMIC_ACQUIRE) == end && windows_files() == 1,
	   "no image registered: the window does not end");

	image__register(&(struct ap_image){
	    .active = &active, .pid = &pid, .writer = &w, .cfg = &cfg, .snapshot = snapshot});
	pid = getpid() + 1;
	windows__end(true);
	ok(!snapshots && windows_files() == 1, "the image is another process's: nothing happens");
	pid = getpid();
	active = false;
	windows__end(true);
	ok(!snapshots && windows_files() == 1, "the session is not profiling: nothing happens");
	active = true;

	windows__end(true);
	ok(snapshots == 1 && snapshot_of == &w,
	   "past the end: the registered snapshot is called, with the image's writer");
	ok(windows_files() == 2 && strcmp(w.path, first) && !strncmp(w.path, base, strlen(base)),
	   "the file goes on in a new window's file");
	ok(__atomic_load_n(&ap_window_end, __ATOMIC_ACQUIRE) > end, "the next window's end is set");

	windows__end(true);
	ok(snapshots == 1 && windows_files() == 2, "before the next end: nothing happens");

	sleep_past(__atomic_load_n(&ap_window_end, __ATOMIC_ACQUIRE));
	windows__end(false);
	ok(snapshots == 2 && windows_files() == 2 && access(first, F_OK) != 0,
	   "the third window: AUTOPROF_KEEP=2 removes the first file");
	ok(writer__finish(&w, true) == 0 && access(w.path, F_OK) == 0,
	   "the last window's file finishes");

	/* No windows configured: windows__end does nothing at all. */
	{
		static const struct ap_settled none = {.window_ns = 0};
		char p[PATH_MAX];

		snprintf(p, sizeof(p), "%s/x.data", dir);
		ok(windows__first_path(&none, p, sizeof(p)) == 0 &&
		       !strcmp(p + strlen(dir), "/x.data"),
		   "without AUTOPROF_WINDOW the path is the file's own");
	}

	/* Under the launcher (AUTOPROF_WINDOW_EPOCH): windows count from its start. */
	{
		uint64_t epoch =
		    (ap_now() - WINDOW_NS - WINDOW_NS / 2) / 1000000 * 1000000 - 500000;
		struct ap_settled at = {.window_ns = WINDOW_NS, .window_epoch = epoch};
		char p[PATH_MAX], s[AP_STAMP_LEN];

		snprintf(p, sizeof(p), "%s/e.data", dir);
		window_stamp__utc(epoch + WINDOW_NS, s);
		ok(windows__first_path(&at, p, sizeof(p)) == 0 &&
		       !strcmp(p + strlen(dir) + strlen("/e.data."), s) &&
		       __atomic_load_n(&ap_window_end, __ATOMIC_ACQUIRE) == epoch + 2 * WINDOW_NS,
		   "with an epoch 1.5 windows ago: the window under way, epoch + 1 window (%s), "
		   "ends at epoch + 2",
		   p + strlen(dir) + 1);
	}

	{
		DIR *d = opendir(dir);
		struct dirent *e;
		char f[PATH_MAX + 300];

		while (d && (e = readdir(d)))
			if (e->d_name[0] != '.') {
				snprintf(f, sizeof(f), "%s/%s", dir, e->d_name);
				unlink(f);
			}
		if (d)
			closedir(d);
		rmdir(dir);
	}
	return tap_done();
}
