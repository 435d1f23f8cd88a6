/* SPDX-License-Identifier: MIT */
/*
 * own_stack.c - the handler's work runs on a stack of ours, not the program's.
 *
 * A signal handler runs on whatever stack the thread is on, or, with
 * SA_ONSTACK, on the thread's alternate signal stack: a Rust thread's is a
 * few KiB (it is there for stack-overflow reports), Go's gsignal stack 32
 * KiB, a goroutine's stack or a thread made with a small stack less. Draining
 * the ring and walking the stack with libunwind takes more than that, so the
 * handler moves to a per-thread stack of ours (samplers.c allocates it with
 * a guard page) before doing anything else.
 *
 * The switch is a frame-pointer frame with CFI (CFA = rbp + 16), so the
 * handler's own walk (unw_backtrace from inside the handler) still passes
 * through it to the signal frame and the interrupted code.
 */
#include "handler.h"

#if defined(__x86_64__)
/* void own_stack__call(void *arg, void (*fn)(void *), void *stack_top) */
__asm__(".text\n"
	".globl own_stack__call\n"
	".hidden own_stack__call\n"
	".type own_stack__call, @function\n"
	"own_stack__call:\n"
	"	.cfi_startproc\n"
	"	pushq %rbp\n"
	"	.cfi_def_cfa_offset 16\n"
	"	.cfi_offset %rbp, -16\n"
	"	movq %rsp, %rbp\n"
	"	.cfi_def_cfa_register %rbp\n"
	"	andq $-16, %rdx\n"
	"	movq %rdx, %rsp\n"
	"	call *%rsi\n"
	"	movq %rbp, %rsp\n"
	"	popq %rbp\n"
	"	.cfi_def_cfa %rsp, 8\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size own_stack__call, .-own_stack__call\n");
#else
void own_stack__call(void *arg, void (*fn)(void *), void *stack_top)
{
	(void)stack_top;
	fn(arg); /* no switch where there is no trampoline: the stack we are on */
}
#endif
