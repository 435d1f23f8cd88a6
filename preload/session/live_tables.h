/* SPDX-License-Identifier: MIT */
/*
 * live_tables.h - live.c's tables of sampled blocks and stacks, shared with
 * live_set.c (which writes the live set from them). Nothing else reads them:
 * memory.h has the interface.
 */
#ifndef AUTOPROF_LIVE_TABLES_H
#define AUTOPROF_LIVE_TABLES_H

#include "memory.h"

#define SHARD_BITS 6 /* 64 tables of blocks, by address: threads rarely wait for each other */
#define SHARDS	   (1U << SHARD_BITS)

/* A table of blocks: open addressing by address, under its lock. */
struct shard {
	uintptr_t lock; /* 0, or the holder's mark (live.c) */
	struct live_block *v;
	uint64_t mask, count;
} __attribute__((aligned(64)));

extern struct shard live_shards[SHARDS];
/* The stacks' frames: [nr, ip...] at each stack's id; append-only, read without a lock. */
extern uint64_t *live_frames;

/* Anonymous memory of ours (never the allocator's), or NULL. Async-signal-safe. */
void *live__map(uint64_t bytes);
/* A live set being written (live_set.c's; live.c takes it for fork). */
extern uintptr_t live_snap_lock;

void live__spin_lock(uintptr_t *l);
/* The lock, waited for a bounded time only (from a handler), not at all when this thread holds
 * it (the handler interrupted its holder). Async-signal-safe. */
bool live__spin_trylock(uintptr_t *l);
void live__spin_unlock(uintptr_t *l);
/*
 * Hold every shard, waiting (wait) or, from a handler, a bounded time
 * (false then, holding none). Async-signal-safe when !wait.
 */
bool live__hold_shards(bool wait);
void live__release_shards(void);

/* ---- live_set.c ---- */

/* Map the reserve for writing a live set when memory is short (live__init). 0 or -ENOMEM. */
int live_set__init(void);
/* A child forked while another thread wrote a live set: the kept one (in the parent's file,
 * maybe half made) forgotten, not retired. Async-signal-safe. */
void live_set__drop_kept(void);

#endif /* AUTOPROF_LIVE_TABLES_H */
