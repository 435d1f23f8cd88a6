// SPDX-License-Identifier: MIT
/*
 * prefault.c - map the pages of a big file ahead of the record walker, on
 * another CPU.
 *
 * On a --call-graph dwarf file (8 KiB a record) the kernel's work of mapping
 * each page the walker touches (fault around, rmap and memcg accounting) is
 * as much time as the unwinding itself. A thread that stays a bounded
 * distance (PREFAULT_AHEAD) ahead of the walker and reads one byte of each
 * page of the next chunk takes those page faults concurrently, so the walker
 * finds its pages mapped. (MADV_POPULATE_READ maps the same pages but costs
 * the kernel 1.5x the faults, more than the walker's whole time: the thread
 * fell behind.) It reads only what the walker reads (the data section), the
 * walker's results do not depend on it, and the walker still hands back the
 * pages behind it (perf_file.c, release_behind()), in chunks of 64 MiB
 * rather than 2 while the thread runs: each release is a TLB shootdown on
 * the thread's CPU too (an IPI, a VM exit in a VM), and with 2 MiB chunks
 * the thread cost 40% on a file whose page cache is in large folios (cheap
 * to map); with 64 MiB it costs nothing there and saves 25-45% of the wall
 * time on a file as perf wrote it (small pages).
 *
 * Used for mapped files of at least PREFAULT_MIN bytes when more than one CPU
 * is online; AUTOPROF_REPORT_NO_PREFAULT=1 turns it off;
 * AUTOPROF_REPORT_PREFAULT_MIN and _AHEAD (bytes, for tests) set the size
 * and the distance.
 */
#include "internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#define PREFAULT_MIN   (256ULL << 20)
#define PREFAULT_AHEAD (16ULL << 20) /* how far ahead of the walker pages are mapped */
#define PREFAULT_CHUNK (1ULL << 20)  /* touched between two looks at the walker */
#define PREFAULT_TELL  (1ULL << 20)  /* the walker says where it is this often */

struct prefault {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	const u8 *base;
	u64 size, page, ahead;
	u64 reader;   /* under mu: the walker's position, told every PREFAULT_TELL bytes */
	bool stop;    /* under mu: prefault__stop() wants the thread gone */
	bool waiting; /* under mu: the thread sleeps on cv */
	u64 told;     /* the walker's own: the position it told last */
};

static u64 env_u64(const char *name, u64 dflt)
{
	const char *v = getenv(name);
	char *end;
	unsigned long long n;

	if (!v || !*v)
		return dflt;
	n = strtoull(v, &end, 0);
	return *end ? dflt : (u64)n;
}

/*
 * The thread: touch each page of [done, done + PREFAULT_CHUNK) while done is less than
 * p->ahead past the walker, else sleep until told. A walker behind the last
 * position it told (a new walk) or ahead of done restarts it from there.
 */
static void *prefault_thread(void *arg)
{
	struct prefault *p = arg;
	volatile const u8 *q = p->base;
	u64 done = 0, last = 0;

	pthread_mutex_lock(&p->mu);
	while (!p->stop) {
		u64 r = p->reader & ~(p->page - 1), end, o;

		if (r < last || r > done)
			done = r;
		last = r;
		if (done >= p->size || done - r >= p->ahead) {
			p->waiting = true;
			pthread_cond_wait(&p->cv, &p->mu);
			p->waiting = false;
			continue;
		}
		end = done + PREFAULT_CHUNK < p->size ? done + PREFAULT_CHUNK : p->size;
		pthread_mutex_unlock(&p->mu);
		for (o = done; o < end; o += p->page)
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

	if (!pf->mapped || pf->prefault || env_u64("AUTOPROF_REPORT_NO_PREFAULT", 0) ||
	    pf->size < env_u64("AUTOPROF_REPORT_PREFAULT_MIN", PREFAULT_MIN) ||
	    sysconf(_SC_NPROCESSORS_ONLN) < 2)
		return;
	p = calloc(1, sizeof(*p));
	if (!p)
		return;
	p->base = pf->base;
	p->size = pf->data_end; /* the walker reads no further */
	p->reader = p->told = pf->data_off;
	p->page = (u64)sysconf(_SC_PAGESIZE);
	p->ahead = env_u64("AUTOPROF_REPORT_PREFAULT_AHEAD", PREFAULT_AHEAD);
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
 * PREFAULT_TELL bytes on since it last said, or gone back (a new walk).
 */
void prefault__tell(struct prefault *p, u64 pos)
{
	if (pos >= p->told && pos - p->told < PREFAULT_TELL)
		return;
	p->told = pos;
	pthread_mutex_lock(&p->mu);
	p->reader = pos;
	if (p->waiting)
		pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->mu);
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
