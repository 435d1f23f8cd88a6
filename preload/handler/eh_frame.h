/* SPDX-License-Identifier: MIT */
/*
 * eh_frame.h - a frame's unwind rule, as eh_frame.c reads it from a loaded
 * object's .eh_frame and cfi.c applies it to a stack copy (x86-64 only).
 */
#ifndef AUTOPROF_HANDLER_EH_FRAME_H
#define AUTOPROF_HANDLER_EH_FRAME_H

#include "handler.h"

#if defined(__x86_64__)

enum { DW_RBP = 6, DW_RSP = 7, DW_RA = 16 };
enum { SAVED_SAME, SAVED_AT, SAVED_UNDEF, SAVED_OTHER };
enum { FRAME_CALL, FRAME_PLT, FRAME_SIGNAL };

/* A frame's rule, as the DW_CFA program leaves it at the pc. */
struct rule {
	uint8_t cfa_reg; /* DW_RSP or DW_RBP */
	uint8_t rbp_how, ra_how;
	uint8_t ok;
	int32_t cfa_off;
	int16_t rbp_off, ra_off;
	uint8_t frame;	/* FRAME_*; FRAME_SIGNAL: the registers are in the ucontext at rsp */
	uint8_t plt_ge; /* FRAME_PLT: the CFA is rsp + 8 + ((pc & 15) >= plt_ge) * 8 */
	uint16_t pad;
};

_Static_assert(sizeof(struct rule) == 16, "rule size");

/*
 * The rule at pc: .eh_frame_hdr's table searched for the last FDE starting
 * at or before pc, its CIE's and its DW_CFA programs run up to pc; ok = 0
 * when there is none or it cannot be followed. Readers in flight
 * (objects__enter). Async-signal-safe.
 */
struct rule eh_frame__rule(uint64_t pc);

#endif

#endif
