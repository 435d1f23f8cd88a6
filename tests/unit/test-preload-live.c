/* Unit test: the live blocks' tables of AUTOPROF_MEMORY (preload/session/live.c). */
#include <stdlib.h>
#include <string.h>

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

int main(void)
{
	struct live_block b, got;
	uint64_t ips[3] = {0x1000, 0x2000, 0x3000}, ips2[3] = {0x1000, 0x2000, 0x3001};
	uint32_t s1, s2, s3;
	int bad = 0, live = 0, filter_bad = 0;
	unsigned seed = 1;

	plan(8);
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
	return tap_done();
}
