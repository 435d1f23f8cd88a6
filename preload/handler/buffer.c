/* SPDX-License-Identifier: MIT */
/*
 * buffer.c - a thread's records on their way to the file: the handler builds
 * them in the thread's buffer (one mapping made when the thread started, so
 * nothing is allocated here) and appends the buffer to the file when it is
 * half full or a running thread's last flush is 0.2 s old; and the thread's
 * counts, folded into the image's totals when it stops.
 */
#include "handler.h"

/* A running thread's samples reach the file within 0.2 s. */
#define FLUSH_INTERVAL_NS 200000000ULL

/*
 * Enter t from its signal handler: false when t is being stopped, or when
 * its handler is already running on it (a nested signal: never re-enter the
 * unwinder or the writer), or a visitor holds it (control.c flushing or
 * pausing it: in_handler is 2 then), and then the handler must leave t
 * alone. Pairs with the stopper's store of closed (both sequentially
 * consistent). Async-signal-safe.
 */
bool buffer__enter(struct ap_thread *t)
{
	int idle = 0;

	if (!__atomic_compare_exchange_n(&t->in_handler, &idle, 1, false, __ATOMIC_SEQ_CST,
					 __ATOMIC_RELAXED))
		return false; /* nested, or a visitor has t: the ring keeps the record */
	if (__atomic_load_n(&t->closed, __ATOMIC_SEQ_CST)) {
		__atomic_store_n(&t->in_handler, 0, __ATOMIC_RELEASE);
		return false;
	}
	return true;
}

void buffer__leave(struct ap_thread *t)
{
	__atomic_store_n(&t->in_handler, 0, __ATOMIC_RELEASE);
}

/* Write out the records this thread has built. Async-signal-safe when called
 * from the handler; other callers block the signal first. */
void buffer__flush(struct ap_thread *t)
{
	writer__note_times(t->sampler->writer, t->stats.first_time, t->stats.last_time);
	if (t->len)
		writer__append(t->sampler->writer, t->buf, t->len);
	t->len = 0;
	t->last_flush = t->stats.last_time ? t->stats.last_time : t->last_flush;
}

/*
 * Room for a record of up to len bytes at the end of t's buffer, flushing
 * first if needed; the caller builds the record there and adds its size to
 * t->len. Async-signal-safe.
 */
char *buffer__reserve(struct ap_thread *t, size_t len)
{
	if (t->len + len > t->cap)
		buffer__flush(t);
	return t->buf + t->len;
}

/* Called from the handler after a drain: flush when half full or FLUSH_INTERVAL_NS has passed. */
void buffer__maybe_flush(struct ap_thread *t)
{
	if (t->len > t->cap / 2 || t->stats.last_time - t->last_flush >= FLUSH_INTERVAL_NS)
		buffer__flush(t);
	aggregate__maybe_emit(t, t->stats.last_time);
}

/* Add one thread's counts to total, which other threads may be folding into too. Async-signal-safe.
 */
void buffer__fold_stats(struct ap_stats *total, const struct ap_stats *t)
{
	__atomic_fetch_add(&total->samples, t->samples, __ATOMIC_RELAXED);
	__atomic_fetch_add(&total->lost, t->lost, __ATOMIC_RELAXED);
	__atomic_fetch_add(&total->throttles, t->throttles, __ATOMIC_RELAXED);
	__atomic_fetch_add(&total->period_sum, t->period_sum, __ATOMIC_RELAXED);
	__atomic_fetch_add(&total->unwind_skipped, t->unwind_skipped, __ATOMIC_RELAXED);
	__atomic_fetch_add(&total->unwind_short, t->unwind_short, __ATOMIC_RELAXED);
	__atomic_fetch_add(&total->unwinds, t->unwinds, __ATOMIC_RELAXED);
	__atomic_fetch_add(&total->unwind_ns, t->unwind_ns, __ATOMIC_RELAXED);
	__atomic_fetch_add(&total->frames, t->frames, __ATOMIC_RELAXED);
	__atomic_fetch_add(&total->unwind_slow, t->unwind_slow, __ATOMIC_RELAXED);
	__atomic_fetch_add(&total->own_only, t->own_only, __ATOMIC_RELAXED);
	__atomic_fetch_add(&total->offcpu_waits, t->offcpu_waits, __ATOMIC_RELAXED);
	__atomic_fetch_add(&total->offcpu_ns, t->offcpu_ns, __ATOMIC_RELAXED);
	__atomic_fetch_add(&total->offcpu_short, t->offcpu_short, __ATOMIC_RELAXED);
	__atomic_fetch_add(&total->offcpu_elsewhere, t->offcpu_elsewhere, __ATOMIC_RELAXED);
	for (int i = 0; i < 8; i++)
		__atomic_fetch_add(&total->cost[i], t->cost[i], __ATOMIC_RELAXED);
	__atomic_fetch_add(&total->slowdowns, t->slowdowns, __ATOMIC_RELAXED);
	__atomic_fetch_add(&total->copied, t->copied, __ATOMIC_RELAXED);
	__atomic_fetch_add(&total->copy_end, t->copy_end, __ATOMIC_RELAXED);
	__atomic_fetch_add(&total->agg_full, t->agg_full, __ATOMIC_RELAXED);
	__atomic_fetch_add(&total->threads, 1, __ATOMIC_RELAXED);
	ap_atomic_min_nz(&total->first_time, t->first_time);
	ap_atomic_max(&total->last_time, t->last_time);
}
