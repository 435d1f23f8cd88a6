/* SPDX-License-Identifier: MIT */
/*
 * Unit test: the stack of a memory sample (memory_stack__chain in
 * preload/session/memory_stack.c), walked on the live stack with .eh_frame
 * rules, against libunwind's fast trace (unwind__trace_here, what memory.c
 * used before): the same return addresses from the allocator's caller on,
 * as deep as asked; -1 when the caller is not on the stack; 0 (libunwind
 * then walks) on a stack that is not the thread's (a coroutine's), across a
 * signal frame, and when a frame's rule leads outside the stack (a wild
 * frame pointer) -- without reading there.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include "internal.h"
#include "memory.h"
#include "tap.h"

#if defined(__x86_64__)

/*
 * ms_wild(fn, arg, rbp): calls fn(arg) from a frame whose CFA is rbp + 16,
 * with rbp set to a wild address: a walk through it must stop there.
 */
asm(".pushsection .text\n"
    ".p2align 4\n"
    "ms_wild:\n"
    "	.cfi_startproc\n"
    "	push %rbp\n"
    "	.cfi_def_cfa_offset 16\n"
    "	.cfi_offset rbp, -16\n"
    "	.cfi_def_cfa_register rbp\n"
    "	mov %rdi, %rax\n"
    "	mov %rsi, %rdi\n"
    "	mov %rdx, %rbp\n"
    "	call *%rax\n"
    "	pop %rbp\n"
    "	.cfi_def_cfa rsp, 8\n"
    "	ret\n"
    "	.cfi_endproc\n"
    ".popsection\n");

int ms_wild(int (*fn)(int), int arg, uint64_t rbp);

#define MAX 1024

struct result {
	int mine, theirs; /* entries: memory_stack__chain's, libunwind's (from ret on) */
	bool same;
};

static uint64_t mine[MAX + 1], theirs[MAX + 1];
static void *trace[MAX + 64];

/* Both walks from here, cut at ret; libunwind's only when want_theirs. */
static __attribute__((noinline)) struct result walk_both(uint64_t ret, int depth, bool want_theirs)
{
	struct result r = {0};
	uintptr_t bias = 0;
	int got, i = 0;

	r.mine = memory_stack__chain(ret, mine, depth);
	if (!want_theirs)
		return r;
	got = unwind__trace_here(trace, depth + 24, &bias);
	while (i < got && (uintptr_t)trace[i] + bias != ret)
		i++;
	for (; i < got && r.theirs < depth; i++)
		theirs[r.theirs++] = (uintptr_t)trace[i] + bias;
	r.same = r.mine == r.theirs && !memcmp(mine, theirs, (size_t)r.mine * 8);
	__asm__ volatile("" ::: "memory");
	return r;
}

static struct result last;
static int want_depth = 127;
static bool want_theirs = true;

/* The allocator: its caller's return address is where the chain starts. */
static __attribute__((noinline)) int fake_alloc(void)
{
	last = walk_both((uintptr_t)__builtin_return_address(0), want_depth, want_theirs);
	__asm__ volatile("" ::: "memory");
	return 1;
}

static __attribute__((noinline)) int rec(int d)
{
	int n = d ? rec(d - 1) : fake_alloc();

	__asm__ volatile("" ::: "memory");
	return n + 1;
}

static void *thread_main(void *arg)
{
	memory_stack__thread_start(); /* as the library's start_routine (threads.c) */
	rec(*(int *)arg);
	return NULL;
}

/* A thread the library did not start: its stack is not asked in a sample (glibc's
 * pthread_getattr_np holds the thread's lock while it allocates): libunwind walks. */
static void *thread_unknown(void *arg)
{
	rec(*(int *)arg);
	return NULL;
}

#ifndef __SANITIZE_ADDRESS__
static ucontext_t main_uc, co_uc;

static void co_main(void)
{
	want_theirs = false;
	rec(3);
	want_theirs = true;
}
#endif

static void on_signal(int sig)
{
	(void)sig;
	rec(2);
}

int main(void)
{
	static char co_stack[64 * 1024];
	pthread_t th;
	int d = 10;
	struct result r;

	plan(14);
	/* every thread makes the fast-trace table, as with a signal per sample */
	unwind__init(&(struct ap_settled){.timer_mode = true}, false);
	memory_stack__init();

	rec(5);
	ok(last.mine > 3 && last.same,
	   "5 frames deep: libunwind's frames, to the outermost (%d, %d)", last.mine, last.theirs);
	want_depth = 64;
	rec(200);
	ok(last.mine == 64 && last.same, "200 deep, 64 asked: libunwind's 64 (%d, %d)", last.mine,
	   last.theirs);
	want_depth = 127;
	rec(20);
	ok(last.same, "again, with the rules kept: the same (%d)", last.mine);
	r = walk_both(12345, 127, false);
	ok(r.mine == -1, "a caller not on the stack: -1 (%d)", r.mine);
	r = walk_both((uintptr_t)__builtin_return_address(0), 0, false);
	ok(r.mine == 0, "nothing asked: 0 (%d)", r.mine);

	ok(!pthread_create(&th, NULL, thread_main, &d) && !pthread_join(th, NULL),
	   "a thread walked");
	ok(last.mine > 10 && last.same, "in a thread: libunwind's frames (%d, %d)", last.mine,
	   last.theirs);
	ok(!pthread_create(&th, NULL, thread_unknown, &d) && !pthread_join(th, NULL),
	   "a thread the library did not start walked");
	ok(last.mine == 0, "...not by this walk: 0, libunwind walks (%d)", last.mine);

#ifdef __SANITIZE_ADDRESS__
	(void)co_stack;
	skip(1, "ASan does not follow swapcontext");
#else
	getcontext(&co_uc);
	co_uc.uc_stack.ss_sp = co_stack;
	co_uc.uc_stack.ss_size = sizeof(co_stack);
	co_uc.uc_link = &main_uc;
	makecontext(&co_uc, co_main, 0);
	swapcontext(&main_uc, &co_uc);
	ok(last.mine == 0, "on a coroutine's stack: 0, libunwind walks (%d)", last.mine);
#endif

	signal(SIGUSR1, on_signal);
	raise(SIGUSR1);
	ok(last.mine == 0, "in a signal handler: 0 at the signal frame, libunwind walks (%d)",
	   last.mine);
	signal(SIGUSR1, SIG_DFL);

	want_theirs = false;
	ms_wild(rec, 2, 0x1000);
	ok(last.mine == 0, "a frame whose CFA is a wild rbp below the stack: 0 (%d)", last.mine);
	ms_wild(rec, 2, 0x7ffffffff100ULL); /* above any user mapping: a read there faults */
	ok(last.mine == 0, "a frame whose CFA is a wild rbp above the stack: 0, not read (%d)",
	   last.mine);
	want_theirs = true;
	rec(5);
	ok(last.mine > 3 && last.same, "and then as before (%d, %d)", last.mine, last.theirs);
	return tap_done();
}

#else

int main(void)
{
	plan(0);
	printf("# SKIP memory_stack.c walks x86-64 only\n");
	return 0;
}

#endif
