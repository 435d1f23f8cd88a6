/* Unit test: the live blocks' tables of AUTOPROF_MEMORY (preload/session/live.c). */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "memory.h"
#include "tap.h"

#define N 300000

static uint64_t addrs[N];
static bool in[N];

/* A block address as an allocator gives them: 16-byte aligned, clustered. */
static uint64_t addr_of(int i)
{
	return 0x555500000000ULL + (uint64_t)i * 48 + (uint64_t)(i % 7) * 0x100000;
}

static volatile int churning = 1;

/* Another thread: adds and takes blocks, adds stacks, until told to stop. */
static void *churner(void *arg)
{
	uint64_t ips[2] = {0x7000, 0};

	(void)arg;
	for (uint64_t i = 0; churning; i++) {
		struct live_block b = {.addr = 0x7a0000000000ULL + (i % 5000) * 64, .size = 8};

		if (i % 2)
			live__take(b.addr, &b);
		else
			live__insert(&b);
		if (i % 64 == 0) {
			/* (4096 stacks at most: unbounded, the tables grew for as long as it
			 * ran, and each fork copied more of them: 200 forks took 3 minutes) */
			ips[1] = (i / 64) % 4096;
			live__stack_id(ips, 2, 1, NULL);
		}
	}
	return NULL;
}

/*
 * A child forked without the fork handler's locks (as from a signal handler
 * inside the profiler): the locks the other thread held are freed and its
 * half-changed shard dropped; the tables then work. Exit 0 (nothing
 * dropped), 2 (something), 1 (a block lost or the filter wrong); a hang
 * ends by SIGALRM (20 s: the child's work takes 0.1-0.3 s in a VM where a
 * page's first touch costs 13 us, its 5,700 page faults mostly: a loaded
 * machine made 3 s too short, 1 child in 200).
 */
static int forked_child(void)
{
	struct live_block b, got;
	uint64_t ips[2] = {0x8000, 0x8001};
	uint64_t dropped;
	int bad = 0;

	alarm(20);
	dropped = live__fork_child_inside();
	if (!live__stack_id(ips, 2, 1, NULL))
		bad++;
	for (int i = 0; i < 4000; i++) {
		b = (struct live_block){.addr = 0x7a0000000000ULL + (uint64_t)i * 48, .size = 1};
		live__insert(&b);
	}
	for (int i = 0; i < 4000; i++) {
		uint64_t a = 0x7a0000000000ULL + (uint64_t)i * 48;

		bad += !live__filter_has(ap_live_filter, a);
		bad += !live__take(a, &got);
	}
	return bad ? 1 : dropped ? 2 : 0;
}

int main(void)
{
	struct live_block b, got;
	uint64_t ips[3] = {0x1000, 0x2000, 0x3000}, ips2[3] = {0x1000, 0x2000, 0x3001};
	uint32_t s1, s2, s3;
	int bad = 0, live = 0, filter_bad = 0;
	unsigned seed = 1;

	plan(10);
	ok(live__init() == 0, "the tables are mapped");
	s1 = live__stack_id(ips, 3, 1, NULL);
	s2 = live__stack_id(ips, 3, 1, NULL);
	s3 = live__stack_id(ips2, 3, 1, NULL);
	ok(s1 && s1 == s2 && s3 && s3 != s1, "a stack has one id; another stack another (%u %u %u)",
	   s1, s2, s3);

	/* Insert N blocks (the shards grow many times), take a random half, check the rest. */
	for (int i = 0; i < N; i++) {
		addrs[i] = addr_of(i);
		b = (struct live_block){.addr = addrs[i],
					.size = (uint64_t)i + 1,
					.weight = 7,
					.stack = i % 2 ? s1 : s3};
		live__insert(&b);
		in[i] = true;
	}
	for (int i = 0; i < N; i++) {
		seed = seed * 1103515245 + 12345;
		if ((seed >> 16) & 1) {
			if (!live__take(addrs[i], &got) || got.addr != addrs[i] ||
			    got.size != (uint64_t)i + 1)
				bad++;
			in[i] = false;
		}
	}
	ok(bad == 0, "every block taken out was found with its size (%d wrong)", bad);
	bad = 0;
	for (int i = 0; i < N; i++) {
		bool had = live__take(addrs[i], &got);

		if (had != in[i] || (had && got.size != (uint64_t)i + 1))
			bad++;
		live += had;
		if (had) { /* put back, to check the filter below */
			live__insert(&got);
		}
	}
	ok(bad == 0, "after deletions (backward shifts), exactly the remaining %d blocks are found",
	   live);
	for (int i = 0; i < N; i++)
		if (in[i] && !live__filter_has(ap_live_filter, addrs[i]))
			filter_bad++;
	ok(filter_bad == 0, "the filter has every live block (%d missing)", filter_bad);
	ok(!live__take(0x1234560, &got) && !live__take(addrs[0] + 8, &got),
	   "an address never inserted is not found");
	b = (struct live_block){.addr = addrs[1], .size = 99, .weight = 1, .stack = s1};
	live__insert(&b); /* a block at an address already live replaces it */
	ok(live__take(addrs[1], &got) && got.size == 99 && !live__take(addrs[1], &got),
	   "a block inserted over a live one replaces it");
	for (int i = 0; i < N; i++)
		if (in[i] && i != 1)
			live__take(addrs[i], &got);
	filter_bad = 0;
	for (int i = 0; i < N; i++)
		if (live__filter_has(ap_live_filter, addrs[i]))
			filter_bad++;
	ok(filter_bad == 0, "with every block taken, the filter is empty (%d left)", filter_bad);

	{
		pthread_t t;
		int hung = 0, wrong = 0, drops = 0;

		pthread_create(&t, NULL, churner, NULL);
		for (int i = 0; i < 200; i++) {
			pid_t pid = fork();
			int status;

			if (pid == 0)
				_exit(forked_child());
			waitpid(pid, &status, 0);
			hung += WIFSIGNALED(status);
			wrong += WIFEXITED(status) && WEXITSTATUS(status) == 1;
			drops += WIFEXITED(status) && WEXITSTATUS(status) == 2;
			if (hung)
				break; /* one is enough */
		}
		churning = 0;
		pthread_join(t, NULL);
		ok(hung == 0,
		   "200 children forked while another thread changes the tables, without "
		   "the fork handler: none hangs (%d did)",
		   hung);
		ok(wrong == 0,
		   "...their tables work: every block found, the filter right (%d wrong; "
		   "%d dropped a shard)",
		   wrong, drops);
	}
	return tap_done();
}
