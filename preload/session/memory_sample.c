/* SPDX-License-Identifier: MIT */
/*
 * memory_sample.c - AUTOPROF_MEMORY's samples: when they come (the Poisson
 * process: each thread's random numbers, xorshift64* seeded at its first
 * allocation, and the bytes to its next sample, geometric of mean the
 * interval) and their SAMPLE record's layout.
 */
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>

#include "memory.h"

/* xorshift64*: the thread's uniform numbers. */
static uint64_t next_random(void)
{
	uint64_t x = ap_mem.rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	ap_mem.rng = x;
	return x * 0x2545F4914F6CDD1DULL;
}

/* ln(x) for x in (0, 1], to about 1e-9: x = m * 2^e with m in [1, 2), ln m by atanh's series. */
static double ln(double x)
{
	uint64_t bits;
	double m, z, z2, sum = 0, term;
	int e;

	memcpy(&bits, &x, sizeof(bits));
	e = (int)((bits >> 52) & 0x7ff) - 1023;
	bits = (bits & ((1ULL << 52) - 1)) | (1023ULL << 52);
	memcpy(&m, &bits, sizeof(m));
	if (m > 1.41421356237309505) {
		m /= 2;
		e++;
	}
	z = (m - 1) / (m + 1); /* |z| < 0.172 */
	z2 = z * z;
	term = z;
	for (int k = 1; k < 24; k += 2) {
		sum += term / k;
		term *= z2;
	}
	return 2 * sum + e * 0.69314718055994530942;
}

/*
 * The next interval, in bytes: geometric of mean exactly ap_mem_interval (I), 1 + floor(ln u /
 * ln(1 - 1/I)): each byte sampled with probability 1/I, so that a weight k * I is unbiased at
 * any I (an exponential of mean I truncated to whole bytes has a mean near I - 1/2: +5% at 8).
 */
int64_t memory_sample__gap(void)
{
	double u = ((double)(next_random() >> 11) + 1) * (1.0 / 9007199254740992.0); /* (0, 1] */
	double v;

	if (ap_mem_interval <= 1)
		return 1;
	v = ln(u) / ln(1.0 - 1.0 / (double)ap_mem_interval); /* 1 - 1/I: exact below 2^53 */
	return v >= 1e15 ? (int64_t)1e15 : 1 + (int64_t)v;
}

/* A thread's first allocation: seed its generator and draw its first interval. */
void memory_sample__seed(void)
{
	uint64_t s = (uint64_t)raw_syscall(SYS_gettid) * 0x9E3779B97F4A7C15ULL ^ ap_now() ^
		     (uintptr_t)&ap_mem;

	ap_mem.rng = s ? s : 1;
	ap_mem.left = ap_mem.drawn = memory_sample__gap();
}

/*
 * Lay out a SAMPLE of a memory attr (AP_MEMORY_SAMPLE_TYPE): id, ip, pid/tid,
 * time, the block's address, cpu 0, period (estimated bytes), the chain of nr
 * entries, the block's size as the weight. Returns its size, or 0 when it
 * does not fit in cap. Async-signal-safe.
 */
size_t memory_sample__put(void *buf, size_t cap, uint64_t id, uint32_t pid, uint32_t tid,
			  uint64_t time, uint64_t addr, uint64_t period, const uint64_t *chain,
			  unsigned nr, uint64_t size)
{
	size_t len = sizeof(struct perf_event_header) + 9 * 8 + (size_t)nr * 8;
	struct perf_event_header h = {
	    .type = PERF_RECORD_SAMPLE, .misc = PERF_RECORD_MISC_USER, .size = (uint16_t)len};
	uint64_t *p = (uint64_t *)((struct perf_event_header *)buf + 1);

	if (len > cap || len > UINT16_MAX || nr < 2)
		return 0;
	memcpy(buf, &h, sizeof(h));
	*p++ = id;			  /* IDENTIFIER */
	*p++ = chain[1];		  /* IP: the allocator's caller */
	*p++ = (uint64_t)tid << 32 | pid; /* TID */
	*p++ = time;			  /* TIME */
	*p++ = addr;			  /* ADDR */
	*p++ = 0;			  /* CPU */
	*p++ = period;			  /* PERIOD */
	*p++ = nr;			  /* CALLCHAIN */
	memcpy(p, chain, (size_t)nr * 8);
	p += nr;
	*p = size; /* WEIGHT */
	return len;
}

/*
 * State n bytes not in the profile in w's file: an alloc-bytes record (attr id) of period 0 (it
 * weighs nothing in any reader), address addr (0: allocated before sampling started;
 * AP_MEMORY_UNSEEN_ADDR: memory the wrappers did not see) and the bytes as its size, which
 * autoprof-report sums and says. Returns whether it was written. Not async-signal-safe.
 */
bool memory_sample__note(struct writer *w, uint64_t id, uint64_t n, uint64_t addr)
{
	uint64_t chain[2] = {PERF_CONTEXT_USER, 0}, now = ap_now();
	char rec[128];
	sigset_t all, old;
	size_t len;
	int err;

	if (!n || !id)
		return false;
	len = memory_sample__put(rec, sizeof(rec), id, (uint32_t)autoprof.pid,
				 (uint32_t)autoprof.pid, now, addr, 0, chain, 2, n);
	sigfillset(&all); /* our handler appends too (raw: the program's view of its mask) */
	raw_syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, &old, _NSIG / 8);
	err = writer__append(w, rec, len);
	raw_syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, _NSIG / 8);
	writer__note_times(w, now, now);
	return err == 0;
}
