/* SPDX-License-Identifier: MIT */
/*
 * thread.c - per-thread sampling state: the thread's own perf event, its ring
 * buffer, and the records it has built but not yet written.
 *
 * Everything a thread needs in its signal handler lives in one mapping made
 * when the thread starts sampling, so the handler never allocates.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

#define RECORD_BUF_BYTES (256 * 1024)
#define SCRATCH_BYTES (64 * 1024)
#define FLUSH_INTERVAL_NS 1000000000ULL /* the file on disk lags by at most ~1 s */

AP_TLS struct ap_thread *ap_self;

/* Ring size: a signal per sample keeps rings nearly empty; fp chains are larger. */
static unsigned ring_pages(void)
{
	return autoprof.cfg.callgraph == AP_CG_FP ? 8 : 2;
}

/*
 * Start sampling the calling thread. Returns 0 or -errno (nothing is left
 * behind on failure). Not async-signal-safe.
 */
int thread__start(void)
{
	size_t len = PERF_ALIGN8(sizeof(struct ap_thread)) + RECORD_BUF_BYTES + SCRATCH_BYTES;
	struct ap_thread *t;
	void *mem;
	int err;

	mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return -errno;
	t = mem;
	t->mem = mem;
	t->mem_len = len;
	t->buf = (char *)mem + PERF_ALIGN8(sizeof(*t));
	t->cap = RECORD_BUF_BYTES;
	t->scratch = t->buf + RECORD_BUF_BYTES;
	t->tid = gettid();
	t->last_flush = ap_now();

	t->fd = event__open(&autoprof.attr, 0);
	if (t->fd < 0) {
		err = t->fd;
		goto out_mem;
	}
	err = ring__map(&t->ring, t->fd, ring_pages());
	if (err)
		goto out_fd;
	if (autoprof.cfg.callgraph == AP_CG_LIBUNWIND)
		unwind__prime_thread();
	err = event__route_signal(t->fd, autoprof.cfg.signo, t->tid);
	if (err)
		goto out_ring;
	ap_self = t;
	if (ioctl(t->fd, PERF_EVENT_IOC_ENABLE, 0) < 0) {
		err = -errno;
		ap_self = NULL;
		goto out_ring;
	}
	return 0;

out_ring:
	ring__unmap(&t->ring);
out_fd:
	close(t->fd);
out_mem:
	munmap(mem, len);
	return err;
}

/* Write out the records this thread has built. Async-signal-safe when called
 * from the handler; other callers block the signal first. */
void thread__flush(struct ap_thread *t)
{
	if (t->len)
		writer__append(&autoprof.writer, t->buf, t->len);
	t->len = 0;
	t->last_flush = t->last_time ? t->last_time : t->last_flush;
}

/*
 * Room for a record of up to len bytes at the end of t's buffer, flushing
 * first if needed; the caller builds the record there and adds its size to
 * t->len. Async-signal-safe.
 */
char *thread__reserve(struct ap_thread *t, size_t len)
{
	if (t->len + len > t->cap)
		thread__flush(t);
	return t->buf + t->len;
}

static void fold_u64(uint64_t *dst, uint64_t v)
{
	__atomic_fetch_add(dst, v, __ATOMIC_RELAXED);
}

/*
 * Stop sampling thread t (the calling thread): disable its event, keep the
 * samples still in the ring, write everything out and free it all.
 * Not async-signal-safe.
 */
void thread__stop(struct ap_thread *t)
{
	sigset_t block, old;

	sigemptyset(&block);
	sigaddset(&block, autoprof.cfg.signo);
	pthread_sigmask(SIG_BLOCK, &block, &old);

	ioctl(t->fd, PERF_EVENT_IOC_DISABLE, 0);
	sample__drain(t, NULL);
	thread__flush(t);
	ap_self = NULL;

	fold_u64(&autoprof.samples, t->samples);
	fold_u64(&autoprof.lost, t->lost);
	fold_u64(&autoprof.throttles, t->throttles);
	fold_u64(&autoprof.unwind_skipped, t->unwind_skipped);
	fold_u64(&autoprof.unwind_short, t->unwind_short);
	if (t->first_time && (!autoprof.first_sample || t->first_time < autoprof.first_sample))
		autoprof.first_sample = t->first_time;
	if (t->last_time > autoprof.last_sample)
		autoprof.last_sample = t->last_time;

	ring__unmap(&t->ring);
	close(t->fd);
	munmap(t->mem, t->mem_len);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* Called from the handler after a drain: flush when half full or a second has passed. */
void thread__maybe_flush(struct ap_thread *t)
{
	if (t->len > t->cap / 2 || t->last_time - t->last_flush >= FLUSH_INTERVAL_NS)
		thread__flush(t);
}
