// SPDX-License-Identifier: MIT
/*
 * prefault.c - map the pages of a big file ahead of the record walker, on
 * another CPU.
 *
 * On a --call-graph dwarf file (8 KiB a record) the kernel's work of mapping
 * each page the walker touches (fault around, rmap and memcg accounting) and
 * of unmapping it again is as much time as the unwinding itself. A thread
 * on another CPU does that work: it stays a bounded distance
 * (PREFAULT_AHEAD) ahead of the walker, reading one byte of each
 * PREFAULT_STRIDE of the next chunk so the walker finds its pages mapped,
 * and when it is that far ahead it hands back the pages the walker has
 * passed (see PREFAULT_RELEASE), which the walker does itself without the
 * thread (perf_file.c, release_behind()). The walker's results do not depend
 * on it: a page handed back too early is mapped again when read. It reads
 * only what the walker reads (the data section).
 * (MADV_POPULATE_READ maps the same pages but costs the kernel 1.5x the
 * faults, more than the walker's whole time: the thread fell behind.)
 *
 * Used for mapped files of at least PREFAULT_MIN bytes when more than one CPU
 * is online; AUTOPROF_REPORT_NO_PREFAULT=1 turns it off;
 * AUTOPROF_REPORT_PREFAULT_MIN, _AHEAD and _RELEASE (bytes, for tests) set
 * the size, the distance and PREFAULT_RELEASE.
 */
#include "autoprof/env.h"
#include "read/read.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define PREFAULT_MIN   (256ULL << 20)
#define PREFAULT_AHEAD (16ULL << 20) /* how far ahead of the walker pages are mapped */
#define PREFAULT_CHUNK (1ULL << 20)  /* touched between two looks at the walker */
#define PREFAULT_TELL  (1ULL << 20)  /* the walker says where it is this often */
/*
 * One fault maps the whole aligned 64 KiB around it (the kernel's default
 * fault_around_bytes), so one byte per 64 KiB maps every page. Reading one
 * byte of each 4 KiB page as well cost the thread a TLB and cache miss per
 * page (60 ms of a 3 GB file) and made it the slower of the two: wall time
 * -12% (medians of 15 interleaved runs). A kernel set to fault around less
 * leaves the rest to the walker, as without the thread.
 */
#define PREFAULT_STRIDE (64ULL << 10)
/*
 * Pages behind the walker are handed back once PREFAULT_RELEASE of them
 * have gathered and the thread is PREFAULT_AHEAD ahead (it has nothing else
 * to do), and at 4 times that whatever it is doing, which bounds the
 * memory the mapping holds. Each release is a TLB shootdown on the walker's
 * CPU too (an IPI, a VM exit in a VM), so not too often: releasing in the
 * thread rather than the walker took 15% off the wall time (medians of 13
 * interleaved runs on a 3.2 GB file; 8/32 MiB was 6% slower than 16/64,
 * 64/128 no faster). A walker 8 times PREFAULT_RELEASE past the last
 * release (the thread is slow to wake or gets no CPU) releases itself
 * (prefault__tell()).
 */
#define PREFAULT_RELEASE (16ULL << 20)

struct prefault {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	const u8 *base;
	u64 size, page, ahead;
	u64 release, release_max, release_hard; /* PREFAULT_RELEASE, 4 and 8 times it */
	u64 reader;   /* under mu: the walker's position, told every PREFAULT_TELL bytes */
	u64 released; /* under mu: the pages below this were handed back (or are being) */
	bool stop;    /* under mu: prefault__stop() wants the thread gone */
	bool waiting; /* under mu: the thread sleeps on cv */
	u64 told;     /* the walker's own: the position it told last */
};

static u64 env_u64(enum ap_env var, u64 dflt)
{
	const char *v = ap_env(var);
	char *end;
	unsigned long long n;

	if (!v || !*v)
		return dflt;
	n = strtoull(v, &end, 0);
	return *end ? dflt : (u64)n;
}

/* Hand back [from, to) of @p's mapping; called without p->mu, the range claimed under it. */
static void release(struct prefault *p, u64 from, u64 to)
{
	if (to > from)
		madvise((void *)(p->base + from), to - from, MADV_DONTNEED);
}

/*
 * The thread: touch [done, done + PREFAULT_CHUNK) while done is less than
 * p->ahead past the walker; else hand back the pages behind the walker if
 * enough have gathered (see PREFAULT_RELEASE), or sleep until told. A walker
 * behind the last position it told (a new walk) or ahead of done restarts it
 * from there.
 */
static void *prefault_thread(void *arg)
{
	struct prefault *p = arg;
	volatile const u8 *q = p->base;
	u64 done = 0, last = 0;

	pthread_mutex_lock(&p->mu);
	while (!p->stop) {
		u64 r = p->reader & ~(p->page - 1), end, o, from;
		bool idle;

		if (r < last || r > done)
			done = r;
		if (r < p->released)
			p->released = r;
		last = r;
		idle = done >= p->size || done - r >= p->ahead;
		if (r - p->released >= p->release_max || (idle && r - p->released >= p->release)) {
			from = p->released;
			p->released = r;
			pthread_mutex_unlock(&p->mu);
			release(p, from, r);
			pthread_mutex_lock(&p->mu);
			continue;
		}
		if (idle) {
			p->waiting = true;
			pthread_cond_wait(&p->cv, &p->mu);
			p->waiting = false;
			continue;
		}
		end = done + PREFAULT_CHUNK < p->size ? done + PREFAULT_CHUNK : p->size;
		pthread_mutex_unlock(&p->mu);
		for (o = done; o < end; o += PREFAULT_STRIDE)
			(void)q[o];
		pthread_mutex_lock(&p->mu);
		done = end;
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/*
 * Start the thread for @pf's mapping if it is worth it (see the top);
 * quietly does nothing otherwise, or if the thread cannot be made.
 */
void prefault__start(struct perf_file *pf)
{
	struct prefault *p;

	if (!pf->mapped || pf->prefault || env_u64(AP_ENV_REPORT_NO_PREFAULT, 0) ||
	    pf->size < env_u64(AP_ENV_REPORT_PREFAULT_MIN, PREFAULT_MIN) ||
	    sysconf(_SC_NPROCESSORS_ONLN) < 2)
		return;
	p = calloc(1, sizeof(*p));
	if (!p)
		return;
	p->base = pf->base;
	p->size = pf->data_end; /* the walker reads no further */
	p->reader = p->told = pf->data_off;
	p->page = (u64)sysconf(_SC_PAGESIZE);
	p->released = pf->data_off & ~(p->page - 1);
	p->release = env_u64(AP_ENV_REPORT_PREFAULT_RELEASE, PREFAULT_RELEASE);
	p->release_max = p->release > UINT64_MAX / 4 ? UINT64_MAX : 4 * p->release;
	p->release_hard = p->release > UINT64_MAX / 8 ? UINT64_MAX : 8 * p->release;
	p->ahead = env_u64(AP_ENV_REPORT_PREFAULT_AHEAD, PREFAULT_AHEAD);
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	if (pthread_create(&p->thread, NULL, prefault_thread, p)) {
		pthread_cond_destroy(&p->cv);
		pthread_mutex_destroy(&p->mu);
		free(p);
		return;
	}
	pf->prefault = p;
}

/*
 * The walker is at file offset @pos: wake the thread if it has moved
 * PREFAULT_TELL bytes on since it last said, or gone back (a new walk); hand
 * back the pages behind it here if the thread has not for 8 times
 * PREFAULT_RELEASE.
 */
void prefault__tell(struct prefault *p, u64 pos)
{
	u64 from = 0, to = 0;

	if (pos >= p->told && pos - p->told < PREFAULT_TELL)
		return;
	p->told = pos;
	pthread_mutex_lock(&p->mu);
	p->reader = pos;
	pos &= ~(p->page - 1);
	if (pos < p->released)
		p->released = pos;
	else if (pos - p->released >= p->release_hard) {
		from = p->released;
		to = p->released = pos;
	}
	if (p->waiting)
		pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->mu);
	release(p, from, to);
}

/* Stop and join @pf's thread, if any: before the mapping goes away. */
void prefault__stop(struct perf_file *pf)
{
	struct prefault *p = pf->prefault;

	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->stop = true;
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->thread, NULL);
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
	free(p);
	pf->prefault = NULL;
}
