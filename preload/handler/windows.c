/* SPDX-License-Identifier: MIT */
/*
 * windows.c - AUTOPROF_WINDOW: one complete perf.data per window of time,
 * named FILE.<UTC start of the window, yyyymmddThhmmss.mmm> so that they sort
 * by time, the oldest beyond AUTOPROF_KEEP removed.
 *
 * Windows follow each other from the image's start, or under the launcher
 * from its start (AUTOPROF_WINDOW_EPOCH: window k spans EPOCH + k * DURATION
 * in every process of the run, which the launcher merges). A window ends at the
 * first sample after its end (the handler checks the sample's time, see
 * on_signal.c): from that handler, on that thread, every sampled thread is
 * taken from its handler for a moment (samplers.c, registry__visit) and its
 * buffer written to the old file, which is then finished; the new file gets
 * the header, attrs and features (writer__rotate), each thread's COMM
 * record, and the MMAP2 records of every object again, each before the first
 * sample that needs it (objects.c), and the session's live set when it
 * registered one (struct ap_image's snapshot: AUTOPROF_MEMORY). What the
 * handler reads of the image (its file, pid, whether it is profiled) is
 * what the session registered (image.c). No thread is woken up: a window in which
 * nothing ran leaves no file, and the file of the last busy window is
 * complete up to each thread's last flush (0.2 s) until the next sample or
 * `autoprof ctl PID dump`.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "handler.h"
#include "pages.h"
#include "settled.h"
#include "setup.h"

#define STAMP_LEN AP_STAMP_LEN

uint64_t ap_window_end; /* CLOCK_MONOTONIC ns the current window ends at; 0: no windows */

/* AUTOPROF_WINDOW and AUTOPROF_KEEP, as settled (windows__first_path, before any handler). */
static uint64_t window_ns;
static unsigned keep_n;

static char base[PATH_MAX] AP_LARGE_BSS; /* the image's path, without the window's stamp */
static uint64_t first_start;		 /* the first window's start (CLOCK_MONOTONIC ns) */
static char (*kept)[STAMP_LEN];		 /* the stamps of the files kept, oldest first (a ring) */
static unsigned kept_head, kept_count;
static int rotating;   /* a handler is ending a window; atomic */
static char *prologue; /* the MMAP2 records of what was mapped at start */
static size_t prologue_len;

/* base + "." + s into out (PATH_MAX bytes); false when too long. Async-signal-safe. */
static bool join(char *out, const char *s)
{
	size_t b = strlen(base);

	if (b + 1 + strlen(s) + 1 > PATH_MAX)
		return false;
	memcpy(out, base, b);
	out[b] = '.';
	strcpy(out + b + 1, s);
	return true;
}

/* Remember the new file's stamp; remove the oldest file beyond AUTOPROF_KEEP. Async-signal-safe. */
static void keep(const char *s)
{
	unsigned n = keep_n;
	char path[PATH_MAX];

	if (!n || !kept)
		return;
	if (kept_count == n) {
		if (join(path, kept[kept_head]))
			raw_syscall(SYS_unlink, path);
		kept_head = (kept_head + 1) % n;
		kept_count--;
	}
	memcpy(kept[(kept_head + kept_count) % n], s, STAMP_LEN);
	kept_count++;
}

/*
 * The first window's path for an image whose file would be path: path with
 * the stamp of now. Sets up the windows of cfg (AUTOPROF_WINDOW, _KEEP).
 * Returns 0 or -ENAMETOOLONG. Not async-signal-safe.
 */
int windows__first_path(const struct ap_settled *cfg, char *path, size_t cap)
{
	char s[STAMP_LEN];

	window_ns = cfg->window_ns;
	keep_n = cfg->keep;
	if (!window_ns)
		return 0;
	if (strlen(path) + 1 + STAMP_LEN > cap || strlen(path) >= sizeof(base))
		return -ENAMETOOLONG;
	strcpy(base, path);
	if (keep_n && !kept)
		kept = pages__alloc((size_t)keep_n * STAMP_LEN); /* a forked child: pages.h */
	kept_head = kept_count = 0;
	rotating = 0; /* (a forked child: the parent's rotation is not here) */
	first_start = ap_now();
	/* Under the launcher, windows count from its start: those of every process line up. */
	if (cfg->window_epoch && cfg->window_epoch <= first_start)
		first_start -= (first_start - cfg->window_epoch) % window_ns;
	window_stamp__utc(first_start, s);
	join(path, s);
	keep(s);
	__atomic_store_n(&ap_window_end, first_start + window_ns, __ATOMIC_RELEASE);
	return 0;
}

/*
 * Keep a copy of the records the image's file starts with (the MMAP2
 * records of every executable mapping, mappings.c), for every window's file
 * to start with them too. Not async-signal-safe.
 */
void windows__save_prologue(const struct writer *w)
{
	size_t len = (size_t)(w->end - w->data_offset);
	int fd;
	char *p;

	if (!window_ns || !len)
		return;
	fd = open(w->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC); /* the writer's is write-only */
	p = fd >= 0 ? pages__alloc(len) : NULL;		       /* a forked child's too: pages.h */
	if (p && pread(fd, p, len, (off_t)w->data_offset) == (ssize_t)len) {
		pages__free(prologue);
		prologue = p;
		prologue_len = len;
	} else {
		pages__free(p);
	}
	if (fd >= 0)
		close(fd);
}

/* Write t's buffer out (to the file of the window that ends). Async-signal-safe. */
static void flush(struct ap_thread *t, void *arg)
{
	(void)arg;
	if (t->batched && t->ring.page)
		on_signal__drain(t, NULL); /* its samples' stacks are in their copies */
	aggregate__emit_all(t);		   /* AUTOPROF_AGGREGATE: the window's merged records too */
	buffer__flush(t);
	t->stats.first_time = 0; /* the next window's time range starts at its first sample */
}

/* The records a new window's file starts with, built in a mapping of ours. */
struct first {
	char *buf;
	size_t len, cap;
	uint64_t time; /* of the COMM records: before any sample the file gets */
};

#define COMM_MAX 96 /* a COMM record with its sample id */

/* Count t (to size struct first). Async-signal-safe. */
static void count(struct ap_thread *t, void *arg)
{
	(void)t;
	(*(size_t *)arg)++;
}

/* Add t's COMM record to the new file's first records. Async-signal-safe. */
static void name(struct ap_thread *t, void *arg)
{
	char path[64] = "/proc/self/task/", comm[32] = "";
	size_t n = strlen(path);
	struct first *f = arg;
	int tid = t->tid, k = 0;
	char digits[16];

	if (f->len + COMM_MAX > f->cap)
		return; /* a thread that started since: its own COMM is in its buffer */
	do {
		digits[k++] = (char)('0' + tid % 10);
		tid /= 10;
	} while (tid);
	while (k)
		path[n++] = digits[--k];
	strcpy(path + n, "/comm");
	raw_syscall__read_file(path, comm, sizeof(comm));
	comm[strcspn(comm, "\n")] = 0;
	f->len += record__comm(f->buf + f->len, COMM_MAX, t->sampler->pid, (uint32_t)t->tid, comm,
			       f->time, false);
}

/*
 * Start the new window's file at path: the MMAP2 records of the start, then
 * every thread's COMM record, written with the header under the writer's
 * lock (no thread's records can come before them). Async-signal-safe
 * (mmap and munmap are system calls).
 */
static int next_file(struct writer *w, const char *path, uint64_t start)
{
	/* A sample still in a thread's ring at the window's end (at most one
	 * per thread, a few ms old) comes into this file: name its thread
	 * from the previous window's start on. */
	struct first f = {.time = start > window_ns ? start - window_ns : 0};
	size_t threads = 0;
	int err;

	registry__visit(count, &threads);
	f.cap = prologue_len + (threads + 16) * COMM_MAX;
	f.buf = mmap(NULL, f.cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (f.buf == MAP_FAILED)
		return writer__rotate(w, path, prologue, prologue_len);
	if (prologue_len)
		memcpy(f.buf, prologue, prologue_len);
	f.len = prologue_len;
	registry__visit(name, &f);
	err = writer__rotate(w, path, f.buf, f.len);
	munmap(f.buf, f.cap);
	return err;
}

/* Say once that a window's file could not be made. Async-signal-safe. */
static void say_no_file(void)
{
	static int said;
	static const char msg[] = "autoprof: cannot create a window's file; its samples are lost, "
				  "the next window tries again (said once)\n";

	if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED) && !ap_quiet &&
	    log__stderr_fits(sizeof(msg) - 1))
		raw_syscall(SYS_write, 2, msg, sizeof(msg) - 1);
}

/* windows__end()'s work, on the handler's own stack. Async-signal-safe. */
static void end_window(void *arg)
{
	const struct ap_image *img = image__get();
	uint64_t now = ap_now(), w = window_ns, start;
	char s[STAMP_LEN], path[PATH_MAX];

	(void)arg;
	/* not from a handler that interrupted its own thread's hold (a memory sample, a nested
	 * signal in its handler): that thread's records would miss the file; later, then */
	if (ap_self && __atomic_load_n(&ap_self->in_handler, __ATOMIC_SEQ_CST))
		return;
	if (!w || now < __atomic_load_n(&ap_window_end, __ATOMIC_ACQUIRE) || !img->active ||
	    !__atomic_load_n(img->active, __ATOMIC_ACQUIRE) ||
	    (pid_t)raw_syscall(SYS_getpid) != *img->pid ||
	    __atomic_exchange_n(&rotating, 1, __ATOMIC_ACQUIRE))
		return;
	if (now >= __atomic_load_n(&ap_window_end, __ATOMIC_ACQUIRE)) {
		start = first_start + (now - first_start) / w * w;
		registry__visit(flush, NULL);
		if (img->snapshot)
			img->snapshot(img->writer); /* AUTOPROF_MEMORY: what is live now */
		window_stamp__utc(start, s);
		if (join(path, s) && next_file(img->writer, path, start) == 0) {
			keep(s);
			objects__next_window();
		} else {
			say_no_file();
		}
		__atomic_store_n(&ap_window_end, start + w, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&rotating, 0, __ATOMIC_RELEASE);
}

/*
 * End the window if the time is past its end (see the top of the file):
 * called from a handler (the sampling one after it left its thread, or a
 * `ctl dump`), moving to the thread's own handler stack when it has one and
 * the caller is not on it already (the program's alternate stack may be
 * small). Async-signal-safe.
 */
void windows__end(bool on_own_stack)
{
	struct ap_thread *t = ap_self;

	if (!window_ns)
		return;
	if (!on_own_stack && t && t->stack_top && !__atomic_load_n(&t->closed, __ATOMIC_ACQUIRE))
		own_stack__call(NULL, end_window, t->stack_top);
	else
		end_window(NULL);
}
