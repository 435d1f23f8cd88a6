/* SPDX-License-Identifier: MIT */
/*
 * Unit test: the batched-sample unwinder and its rule cache (cfi__unwind in
 * preload/handler/cfi.c). The functions it unwinds through are written below
 * in assembly with explicit .cfi directives, so each pc's rule is known
 * (the linker puts them in this binary's .eh_frame and .eh_frame_hdr, which
 * the objects table, filled by objects__init(), hands to cfi.c); the stacks
 * are copies built here, at a made-up address, as the kernel would copy them.
 *
 * The cache is checked from outside through what handler.h says of it
 * (AP_CFI_BYTES: a generation, then AP_CFI_ENTRIES entries of 24 bytes each,
 * the pc first, the rule after it, a rule of zero bytes being no rule): a
 * pc's first walk fills an entry (a miss), the next walk uses it without
 * looking it up again (a hit: shown by zeroing the entry's rule, which then
 * ends the walk there), a pc with no rule is cached too, two pcs sharing an
 * entry (found by searching) each get their own rule, the later evicting the
 * earlier, and a library's rules go with it when dlclose unloads it.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include "internal.h"
#include "tap.h"

#if defined(__x86_64__)

/*
 * cfi_outer: the outermost frame (return address undefined).
 * cfi_rbp: a frame-pointer function; its body's CFA is rbp + 16.
 * cfi_big: 4096 bytes whose CFA is rsp + 8 (region A), then 4096 whose CFA is
 *   rsp + 32 (region B, after sub $24), so that two pcs of different rules
 *   can be found that share a cache entry.
 * cfi_expr: a CFA given by a DWARF expression the unwinder does not follow.
 */
asm(".pushsection .text\n"
    ".p2align 4\n"
    "cfi_outer:\n"
    "	.cfi_startproc\n"
    "	.cfi_undefined rip\n"
    "	.fill 32, 1, 0x90\n"
    "	.cfi_endproc\n"
    ".p2align 4\n"
    "cfi_rbp:\n"
    "	.cfi_startproc\n"
    "	push %rbp\n"
    "	.cfi_def_cfa_offset 16\n"
    "	.cfi_offset rbp, -16\n"
    "	mov %rsp, %rbp\n"
    "	.cfi_def_cfa_register rbp\n"
    "cfi_rbp_body:\n"
    "	.fill 64, 1, 0x90\n"
    "	pop %rbp\n"
    "	.cfi_def_cfa rsp, 8\n"
    "	ret\n"
    "	.cfi_endproc\n"
    ".p2align 4\n"
    "cfi_big:\n"
    "	.cfi_startproc\n"
    "	.fill 4096, 1, 0x90\n"
    "	sub $24, %rsp\n"
    "	.cfi_adjust_cfa_offset 24\n"
    "cfi_big_b:\n"
    "	.fill 4096, 1, 0x90\n"
    "	add $24, %rsp\n"
    "	.cfi_adjust_cfa_offset -24\n"
    "	ret\n"
    "	.cfi_endproc\n"
    ".p2align 4\n"
    "cfi_expr:\n"
    "	.cfi_startproc\n"
    "	.cfi_escape 0x0f, 0x03, 0x77, 0x10, 0x06\n" /* CFA = *(rsp + 16) */
    "	.fill 32, 1, 0x90\n"
    "	ret\n"
    "	.cfi_endproc\n"
    ".p2align 4\n"
    "cfi_sig:\n" /* a signal frame over the rt_sigreturn trampoline */
    "	.cfi_startproc\n"
    "	.cfi_signal_frame\n"
    "	.byte 0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05\n" /* mov $15,%rax; syscall */
    "	.cfi_endproc\n"
    ".popsection\n");

extern char cfi_outer[], cfi_rbp[], cfi_rbp_body[], cfi_big[], cfi_big_b[], cfi_expr[], cfi_sig[];

#define A(sym, off) ((uint64_t)(uintptr_t)(sym) + (off))
#define SP	    0x7ffd00001000ULL /* where the copied stack was */
#define UC_GREG(r)  (offsetof(ucontext_t, uc_mcontext.gregs) + (r) * sizeof(greg_t))
#define ENTRIES_AT  8  /* the entries, after the generation */
#define ENTRY	    24 /* bytes per cache entry (AP_CFI_BYTES / AP_CFI_ENTRIES) */

static uint8_t *cache;	   /* AP_CFI_BYTES, then a guard of canary bytes */
static uint64_t stack[64]; /* the copy of [SP, SP + sizeof(stack)) */
static uint64_t ips[16];
static struct cfi_walk w;

/* Cache entry i (its pc, then its rule). */
static uint8_t *entry(int i)
{
	return cache + ENTRIES_AT + (size_t)i * ENTRY;
}

static void put(uint64_t addr, uint64_t v)
{
	stack[(addr - SP) / 8] = v;
}

static int walk(uint64_t ip, uint64_t sp, uint64_t bp, uint64_t size, int max)
{
	int n;

	memset(ips, 0, sizeof(ips));
	if (!objects__enter())
		return -1;
	n = cfi__unwind(cache, ip, sp, bp, stack, size, ips, max, &w);
	objects__leave();
	return n;
}

/* The cache entry whose pc is pc, or -1; *count: how many entries hold it. */
static int slot_of(uint64_t pc, int *count)
{
	int at = -1, c = 0;

	for (int i = 0; i < AP_CFI_ENTRIES; i++) {
		uint64_t key;

		memcpy(&key, entry(i), 8);
		if (key == pc)
			at = i, c++;
	}
	if (count)
		*count = c;
	return at;
}

static void fresh_cache(void)
{
	memset(cache, 0, AP_CFI_BYTES);
}

/* A walk from region A (RA at sp) and from region B (RA at sp + 24) of cfi_big. */
static uint64_t walk_big(uint64_t ip)
{
	memset(stack, 0, sizeof(stack));
	put(SP, A(cfi_outer, 5));
	put(SP + 24, A(cfi_outer, 9));
	return walk(ip, SP, 0, sizeof(stack), 4) == 2 && w.complete ? ips[1] : 0;
}

static void cache_tests(void)
{
	static int slot_a[4096], slot_b[4096];
	uint64_t ip = A(cfi_rbp_body, 8), ra = A(cfi_outer, 5), heap = (uintptr_t)malloc(64);
	int n, count, s, pa = -1, pb = -1, so4, so8;
	uint8_t good[ENTRY - 8];

	/* Misses fill the cache: the first frame under its pc, callers under pc - 1. */
	fresh_cache();
	memset(stack, 0, sizeof(stack));
	put(SP + 16, SP + 256); /* the caller's rbp, saved at CFA - 16 */
	put(SP + 24, ra);	/* the return address at CFA - 8 */
	n = walk(ip, SP, SP + 16, sizeof(stack), 16);
	ok(n == 2 && ips[0] == ip && ips[1] == ra && w.complete && !w.ran_out,
	   "rbp-based frame then the outermost one: 2 frames, complete (%d)", n);
	s = slot_of(ip, &count);
	ok(s >= 0 && count == 1 && slot_of(ra - 1, NULL) >= 0,
	   "a miss caches the rule: the first frame under its pc, its caller under pc - 1");

	/* A hit: the cached rule is used as it is (zeroed here: no rule), not looked up. */
	memset(entry(s) + 8, 0, ENTRY - 8);
	n = walk(ip, SP, SP + 16, sizeof(stack), 16);
	ok(n == 1 && !w.complete,
	   "a hit is served from the cache: the zeroed rule ends the walk (%d)", n);
	fresh_cache();
	n = walk(ip, SP, SP + 16, sizeof(stack), 16);
	ok(n == 2 && ips[1] == ra, "a cleared cache looks the rule up again");

	/* A pc with no rule: cached too; given a rule in the cache, the walk follows it. */
	fresh_cache();
	memset(stack, 0, sizeof(stack));
	put(SP, ra);
	n = walk(heap, SP, 0, sizeof(stack), 16);
	s = slot_of(heap, NULL);
	ok(n == 1 && !w.complete && !w.ran_out && s >= 0,
	   "a pc outside every object: 1 frame, and the failure is cached");
	walk(A(cfi_big, 100), SP, 0, sizeof(stack), 1);
	memcpy(good, entry(slot_of(A(cfi_big, 100), NULL)) + 8, sizeof(good));
	if (s >= 0)
		memcpy(entry(s) + 8, good, sizeof(good));
	n = walk(heap, SP, 0, sizeof(stack), 16);
	ok(n == 2 && ips[1] == ra,
	   "a cached failure is a hit too: the pc is never looked up again");
	free((void *)(uintptr_t)heap);

	/* Collisions: two pcs of different rules that share an entry. */
	fresh_cache();
	for (int i = 0; i < 4096; i++) {
		walk_big(A(cfi_big, i));
		slot_a[i] = slot_of(A(cfi_big, i), NULL);
	}
	for (int i = 0; i < 4096; i++) {
		walk_big(A(cfi_big_b, i));
		slot_b[i] = slot_of(A(cfi_big_b, i), NULL);
	}
	/* (not the entries the callers' pcs take: the pair must be alone in theirs) */
	walk_big(A(cfi_big, 0));
	walk_big(A(cfi_big_b, 0));
	so4 = slot_of(A(cfi_outer, 4), NULL);
	so8 = slot_of(A(cfi_outer, 8), NULL);
	for (int i = 0; i < 4096 && pa < 0; i++)
		for (int j = 0; j < 4096 && pa < 0; j++)
			if (slot_a[i] >= 0 && slot_a[i] == slot_b[j] && slot_a[i] != so4 &&
			    slot_a[i] != so8)
				pa = i, pb = j;
	ok(pa >= 0, "two pcs of cfi_big's two rules share a cache entry (+%d and +%d)", pa,
	   4100 + pb);
	if (pa < 0) {
		skip(3, "no colliding pair");
		return;
	}
	fresh_cache();
	ok(walk_big(A(cfi_big, pa)) == A(cfi_outer, 5) &&
	       walk_big(A(cfi_big_b, pb)) == A(cfi_outer, 9),
	   "a collision is a miss: the second pc gets its own rule, not the first's");
	ok(slot_of(A(cfi_big_b, pb), NULL) == slot_a[pa] && slot_of(A(cfi_big, pa), NULL) < 0,
	   "the second pc evicted the first from their entry");
	ok(walk_big(A(cfi_big, pa)) == A(cfi_outer, 5) &&
	       slot_of(A(cfi_big, pa), NULL) == slot_a[pa] &&
	       walk_big(A(cfi_big_b, pb)) == A(cfi_outer, 9),
	   "and back: each pc unwinds right however often they take turns");
}

static void walk_tests(void)
{
	uint64_t body = A(cfi_rbp_body, 20), big = A(cfi_big_b, 1000);
	int n;

	/* Three frames: cfi_big's region B, then cfi_rbp's body, then the outermost. */
	fresh_cache();
	memset(stack, 0, sizeof(stack));
	put(SP + 24, body + 1);	       /* cfi_big: RA at CFA - 8, CFA = sp + 32 */
	put(SP + 64, SP + 400);	       /* cfi_rbp: saved rbp at bp */
	put(SP + 72, A(cfi_outer, 3)); /* ... and its return address */
	n = walk(big, SP, SP + 64, sizeof(stack), 16);
	ok(n == 3 && ips[0] == big && ips[1] == body + 1 && ips[2] == A(cfi_outer, 3) &&
	       w.complete && w.signal_uc == 0,
	   "rsp-based, rbp-based, outermost: 3 frames in order, complete (%d)", n);
	n = walk(big, SP, SP + 64, sizeof(stack), 2);
	ok(n == 2 && w.complete, "max 2: 2 frames, complete as deep as asked");
	n = walk(big, SP, SP + 64, 72, 16);
	ok(n == 2 && w.ran_out && !w.complete,
	   "a copy that ends before a return address: the walk ran out of the copy");
	n = walk(big, SP, SP + 64, 24, 16);
	ok(n == 1 && w.ran_out, "a copy too short for the first return address: 1 frame, ran out");
	n = walk(big, SP, SP + 64, 28, 16);
	ok(n == 1 && !w.complete && w.ran_out,
	   "a copy that holds only half of a return address: never read past its end, ran out");

	/* rbp restored from the copy and used by the next frame: recursion with a frame pointer. */
	memset(stack, 0, sizeof(stack));
	put(SP + 16, SP + 64);	       /* frame 1: the saved rbp (frame 2's) */
	put(SP + 24, body + 11);       /* ... and its return address, into cfi_rbp's body again */
	put(SP + 64, SP + 400);	       /* frame 2: its saved rbp */
	put(SP + 72, A(cfi_outer, 3)); /* ... and its return address */
	n = walk(body, SP, SP + 16, sizeof(stack), 16);
	ok(n == 3 && ips[1] == body + 11 && ips[2] == A(cfi_outer, 3) && w.complete,
	   "two rbp-based frames: the caller's rbp is read back from the copy (%d)", n);

	/* The entry pc (exact) is rsp-based even in a function with a frame pointer. */
	memset(stack, 0, sizeof(stack));
	put(SP, A(cfi_outer, 7));
	n = walk(A(cfi_rbp, 0), SP, 0, sizeof(stack), 16);
	ok(n == 2 && ips[1] == A(cfi_outer, 7) && w.complete,
	   "at a function's first instruction the return address is at sp");
	memset(stack, 0, sizeof(stack));
	put(SP + 8, A(cfi_outer, 7));
	n = walk(A(cfi_rbp, 1), SP, 0, sizeof(stack), 16);
	ok(n == 2 && ips[1] == A(cfi_outer, 7), "after push %%rbp it is at sp + 8");

	/* Rules not followed, and walks that would go the wrong way. */
	memset(stack, 0, sizeof(stack));
	put(SP, A(cfi_outer, 7)); /* what rsp + 8 would find */
	n = walk(A(cfi_expr, 4), SP, 0, sizeof(stack), 16);
	ok(n == 1 && !w.complete && !w.ran_out,
	   "a CFA expression other than the PLT's ends the walk");
	memset(stack, 0, sizeof(stack));
	put(SP, 100); /* a return address in the first page */
	n = walk(A(cfi_big, 8), SP, 0, sizeof(stack), 16);
	ok(n == 1 && !w.complete, "a return address below 4096 ends the walk");
	n = walk(A(cfi_rbp_body, 8), SP, SP - 64, sizeof(stack), 16);
	ok(n == 1 && !w.complete, "a frame whose CFA is below sp (outside the copy) ends the walk");
	ok(walk(0, SP, 0, sizeof(stack), 0) == 0, "max 0: no frame");

	/* Through a signal frame: the interrupted registers from the ucontext at sp. */
	memset(stack, 0, sizeof(stack));
	put(SP + UC_GREG(REG_RIP), A(cfi_big, 50));
	put(SP + UC_GREG(REG_RSP), SP + 400);
	put(SP + UC_GREG(REG_RBP), 0);
	put(SP + 400, A(cfi_outer, 11));
	n = walk(A(cfi_sig, 0), SP, 0, sizeof(stack), 16);
	ok(n == 3 && ips[1] == A(cfi_big, 50) && ips[2] == A(cfi_outer, 11) && w.complete,
	   "through a signal frame into the interrupted function and on (%d)", n);
	ok(w.signal_at == 1 && w.signal_uc == SP && w.signal_sp == SP + 400,
	   "the walk says where it crossed the signal frame: frame 1, its ucontext, its sp");
	n = walk(A(cfi_sig, 0), SP, 0, UC_GREG(REG_RIP), 16);
	ok(n == 1 && w.ran_out, "a copy that ends inside the ucontext: ran out");
}

/* build/progs/libhot.so, found from this program's place in build/ (unit/ or asan/unit/). */
static bool find_plugin(char *out, size_t cap)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return false;
	exe[n] = 0;
	for (int up = 0; up < 3; up++) {
		char *slash = strrchr(exe, '/');

		if (!slash)
			return false;
		*slash = 0;
		snprintf(out, cap, "%s/progs/libhot.so", exe);
		if (access(out, R_OK) == 0)
			return true;
	}
	return false;
}

/*
 * A library's rules are cached while it is loaded; once dlclose has unmapped
 * it, its pcs have no rule (the same pc may hold other code later, another
 * library or JIT code): the cache must not answer for them any more.
 */
static void unload_tests(void)
{
	char lib[PATH_MAX + 32];
	void *h;
	uint64_t pc;
	int n;

	if (!find_plugin(lib, sizeof(lib)) || !(h = dlopen(lib, RTLD_NOW | RTLD_LOCAL)) ||
	    !dlsym(h, "hot_in_plugin")) {
		skip(2, "build/progs/libhot.so is not built (make build/progs/libhot.so)");
		return;
	}
	pc = (uint64_t)(uintptr_t)dlsym(h, "hot_in_plugin") + 16;
	for (size_t i = 0; i < sizeof(stack) / 8; i++)
		stack[i] = A(cfi_outer, 5); /* wherever its rule looks, the outermost frame */
	fresh_cache();
	walk(pc, SP, SP, sizeof(stack), 16); /* learns the library: a new object */
	n = walk(pc, SP, SP, sizeof(stack), 16);
	ok(n == 2 && ips[1] == A(cfi_outer, 5) && slot_of(pc, NULL) >= 0,
	   "a dlopened library's function: its rule found and cached (%d frames)", n);
	dlclose(h);
	if (dlsym(RTLD_DEFAULT, "hot_in_plugin")) {
		skip(1, "the library stayed loaded after dlclose");
		return;
	}
	n = walk(pc, SP, SP, sizeof(stack), 16);
	ok(n == 1 && !w.complete,
	   "after dlclose unloaded it, its pc has no rule: the cached one is gone (%d frames)", n);
}

int main(void)
{
	bool guard = true;

	plan(29);
	objects__init();
	ok(objects__ready(), "the objects table is set up (objects__init)");
	cache = malloc(AP_CFI_BYTES + 64);
	if (!cache)
		return 1;
	memset(cache + AP_CFI_BYTES, 0xa5, 64);
	cache_tests();
	walk_tests();
	unload_tests();
	for (int i = 0; i < 64; i++)
		guard &= cache[AP_CFI_BYTES + i] == 0xa5;
	ok(guard, "no walk wrote past the cache's AP_CFI_BYTES");
	free(cache);
	return tap_done();
}

#else

int main(void)
{
	plan(0);
	printf("# SKIP cfi.c unwinds x86-64 only\n");
	return 0;
}

#endif
